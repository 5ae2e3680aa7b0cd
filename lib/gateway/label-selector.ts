import { isFields } from '../object-fields/fields.ts';
import { quote } from '../object-fields/names.ts';
import { checkLabelKey, checkLabelValue, type LabelRequirement, type LabelSelector } from '../kube-syntax/label-selector.ts';
import type { FieldReader } from './field-reader.ts';

const OPERATORS: Readonly<Record<string, LabelRequirement['operator']>> = { In: 'in', NotIn: 'notIn', Exists: 'exists', DoesNotExist: 'doesNotExist' };

/**
 * A metav1.LabelSelector (matchLabels and matchExpressions) as the
 * requirements lib/kube-syntax/label-selector.ts evaluates; undefined, with
 * the problems recorded, when a key, value or operator is not one Kubernetes
 * accepts. An empty selector selects everything, as in Kubernetes.
 */
export function readLabelSelector(reader: FieldReader, value: unknown, field: string): LabelSelector | undefined {
  if (!isFields(value)) {
    reader.problem(field, 'is missing (namespaces.from is Selector)');
    return undefined;
  }
  const before = reader.problems.length;
  const requirements: LabelRequirement[] = [];
  const check = (problem: string | undefined, at: string) => problem !== undefined && reader.problem(at, problem);
  const labels = reader.fields(value['matchLabels'], `${field}.matchLabels`) ?? {};
  for (const [key, labelValue] of Object.entries(labels)) {
    check(checkLabelKey(key), `${field}.matchLabels`);
    if (typeof labelValue !== 'string') reader.problem(`${field}.matchLabels['${key}']`, `${quote(labelValue)} is not a string`);
    else check(checkLabelValue(labelValue), `${field}.matchLabels['${key}']`);
    requirements.push({ key, operator: 'in', values: [String(labelValue)] });
  }
  reader.list(value['matchExpressions'], `${field}.matchExpressions`).forEach((entry, index) => {
    const at = `${field}.matchExpressions[${index}]`;
    if (!isFields(entry)) return reader.problem(at, 'is not an object');
    const operator = typeof entry['operator'] === 'string' ? OPERATORS[entry['operator']] : undefined;
    const key = typeof entry['key'] === 'string' ? entry['key'] : '';
    check(checkLabelKey(key), `${at}.key`);
    const values = reader.list(entry['values'], `${at}.values`);
    values.forEach((item, i) => (typeof item === 'string' ? check(checkLabelValue(item), `${at}.values[${i}]`) : reader.problem(`${at}.values[${i}]`, 'is not a string')));
    if (operator === undefined) return reader.problem(`${at}.operator`, `${quote(entry['operator'])} is not one of In, NotIn, Exists, DoesNotExist`);
    const needsValues = operator === 'in' || operator === 'notIn';
    if (needsValues !== values.length > 0) return reader.problem(`${at}.values`, needsValues ? 'must list values for In and NotIn' : 'must be empty for Exists and DoesNotExist');
    requirements.push(needsValues ? { key, operator, values: values as string[] } : { key, operator });
  });
  return reader.problems.length > before ? undefined : { source: JSON.stringify(value), requirements };
}
