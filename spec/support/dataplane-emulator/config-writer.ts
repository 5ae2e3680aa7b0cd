/**
 * The raw configuration as the Data Plane API stores it: parsed by
 * client-native's config-parser and written back by its String()
 * (client-native v6.3.8 config-parser/writer.go, reader.go,
 * section-parsers.go; v6.2 the same). A raw POST never comes back as posted:
 *
 * - comment lines before the first section first, then `global`, then the
 *   other sections by type in the writer's fixed order (defaults, userlist,
 *   peers, ..., frontend, backend, listen, program, fcgi-app), names sorted
 *   (byte order) within a type, defaults sections after those they name in
 *   `from`;
 * - an unnamed `defaults` is named `unnamed_defaults_<n>` (the first n no
 *   earlier defaults section has, reader.go); the transaction parser a raw
 *   POST goes through has NoNamedDefaultsFrom set (client-native
 *   configuration/interface.go sets c.noNamedDefaultsFrom unconditionally),
 *   so proxies get no `from` added;
 * - within a section, lines are grouped per keyword in the order of the
 *   section's parser sequence, lines of one keyword keeping their order;
 *   keywords no parser knows (UnProcessed, last in every sequence) keep
 *   theirs after all the others;
 * - a comment line travels with the line after it, lines are indented by two
 *   spaces, each section is preceded by an empty line.
 *
 * Approximations, kept in the emulator's list of known differences: only the
 * keywords in the tables below are ranked (others count as UnProcessed, which
 * keeps them in posted order at the end of their section), and a line's text
 * is kept as posted (trimmed) where config-parser re-serialises each
 * keyword's parameters (spacing, some quoting).
 */

/** writer.go String(): the order of section types after `global`. */
const SECTION_ORDER: readonly string[] = [
  'defaults',
  'userlist',
  'peers',
  'mailers',
  'resolvers',
  'cache',
  'ring',
  'traces',
  'log-forward',
  'log-profile',
  'http-errors',
  'acme',
  'crt-store',
  'frontend',
  'backend',
  'listen',
  'program',
  'fcgi-app',
];

/** Section keywords: `global` and the others. */
const SECTIONS: ReadonlySet<string> = new Set(['global', ...SECTION_ORDER]);

/** getGlobalParser(), the keywords of its sequence this emulator ranks, in order. */
const GLOBAL_KEYWORDS = [
  'set-var',
  'set-var-fmt',
  'presetenv',
  'resetenv',
  'setenv',
  'unsetenv',
  'daemon',
  'default-path',
  'localpeer',
  'chroot',
  'uid',
  'user',
  'gid',
  'group',
  'ca-base',
  'crt-base',
  'master-worker',
  'external-check',
  'nbproc',
  'nbthread',
  'cpu-map',
  'maxconn',
  'pidfile',
  'stats socket',
  'stats timeout',
  'hard-stop-after',
  'log',
  'log-send-hostname',
  'lua-prepend-path',
  'lua-load',
  'server-state-file',
  'server-state-base',
  'ssl-engine',
  'insecure-fork-wanted',
  'insecure-setuid-wanted',
  'lua-load-per-thread',
  'ulimit-n',
  'stats maxconn',
];

/** getDefaultParser(). */
const DEFAULTS_KEYWORDS = [
  'enabled',
  'disabled',
  'mode',
  'monitor-uri',
  'hash-type',
  'balance',
  'maxconn',
  'backlog',
  'acl',
  'log',
  'option httplog',
  'email-alert',
  'stats',
  'log-tag',
  'log-format',
  'error-log-format',
  'cookie',
  'option tcplog',
  'option httpclose',
  'option redispatch',
  'option dontlognull',
  'option log-separate-errors',
  'option http-buffer-request',
  'option http-server-close',
  'option http-keep-alive',
  'option forwardfor',
  'option tcp-check',
  'tcp-check',
  'option httpchk',
  'http-check',
  'http-reuse',
  'timeout http-request',
  'timeout check',
  'timeout connect',
  'timeout client',
  'timeout client-fin',
  'timeout queue',
  'timeout server',
  'timeout server-fin',
  'timeout tunnel',
  'timeout http-keep-alive',
  'timeout tarpit',
  'retries',
  'compression',
  'default-server',
  'errorfile',
  'errorfiles',
  'errorloc302',
  'errorloc303',
  'default_backend',
  'unique-id-format',
  'unique-id-header',
  'fullconn',
  'retry-on',
  'http-error',
  'source',
  'http-request',
  'tcp-request',
  'tcp-response',
  'http-response',
  'http-after-response',
];

/** getFrontendParser(). */
const FRONTEND_KEYWORDS = [
  'id',
  'description',
  'enabled',
  'disabled',
  'mode',
  'maxconn',
  'backlog',
  'bind',
  'acl',
  'monitor-uri',
  'monitor fail',
  'log-tag',
  'log-format',
  'error-log-format',
  'log',
  'email-alert',
  'option httpclose',
  'option http-buffer-request',
  'option http-server-close',
  'option http-keep-alive',
  'option forwardfor',
  'option tcplog',
  'option dontlognull',
  'option logasap',
  'option httpslog',
  'option httplog',
  'timeout http-request',
  'timeout client',
  'timeout client-fin',
  'timeout http-keep-alive',
  'timeout tarpit',
  'filter',
  'compression',
  'tcp-request',
  'stats',
  'http-request',
  'redirect',
  'unique-id-format',
  'unique-id-header',
  'errorfile',
  'errorfiles',
  'errorloc302',
  'errorloc303',
  'use_backend',
  'default_backend',
  'stick-table',
  'tcp-response',
  'http-response',
  'http-after-response',
  'http-error',
  'declare capture',
  'rate-limit sessions',
];

/** getBackendParser(); listen sections are ranked with it too. */
const BACKEND_KEYWORDS = [
  'id',
  'description',
  'enabled',
  'disabled',
  'mode',
  'hash-type',
  'balance',
  'acl',
  'force-persist',
  'ignore-persist',
  'option httpclose',
  'option http-buffer-request',
  'option http-server-close',
  'option http-keep-alive',
  'option forwardfor',
  'option ssl-hello-chk',
  'option redispatch',
  'option log-health-checks',
  'option allbackups',
  'option tcp-check',
  'option prefer-last-server',
  'tcp-check',
  'option httpchk',
  'http-check',
  'log',
  'email-alert',
  'timeout http-request',
  'timeout queue',
  'timeout http-keep-alive',
  'timeout check',
  'timeout tunnel',
  'timeout server',
  'timeout server-fin',
  'timeout connect',
  'timeout tarpit',
  'default-server',
  'stick',
  'filter',
  'compression',
  'tcp-request',
  'stats',
  'http-reuse',
  'http-request',
  'redirect',
  'cookie',
  'use-server',
  'stick-table',
  'errorfile',
  'errorfiles',
  'errorloc302',
  'errorloc303',
  'server',
  'retries',
  'tcp-response',
  'http-response',
  'http-after-response',
  'http-error',
  'server-template',
  'load-server-state-from-file',
  'fullconn',
  'retry-on',
  'http-send-name-header',
  'source',
  'persist',
  'hash-balance-factor',
];

const RANKS: ReadonlyMap<string, readonly string[]> = new Map([
  ['global', GLOBAL_KEYWORDS],
  ['defaults', DEFAULTS_KEYWORDS],
  ['frontend', FRONTEND_KEYWORDS],
  ['backend', BACKEND_KEYWORDS],
  ['listen', BACKEND_KEYWORDS],
]);

/** Each section type's keywords split into words once, not once per line ranked (a 10k-backend configuration has 100k lines). */
const RANK_WORDS: ReadonlyMap<string, readonly (readonly string[])[]> = new Map([...RANKS].map(([type, keywords]) => [type, keywords.map((keyword) => keyword.split(' '))]));

interface Line {
  /** Comment lines that came right before it. */
  readonly comments: readonly string[];
  readonly text: string;
  readonly rank: number;
  readonly index: number;
}

interface Section {
  readonly type: string;
  /** '' for global; a generated name for an unnamed defaults section. */
  readonly name: string;
  /** The `from` of the header, when it has one. */
  readonly from: string | undefined;
  readonly lines: Line[];
  /** Comments after the section's last line. */
  trailing: string[];
}

/** `defaults [<name>] [from <defaults>]`, `frontend <name> [from <defaults>]`... */
function parseHeader(words: readonly string[]): { name: string | undefined; from: string | undefined } {
  if (words[0] === 'defaults' && words[1] === 'from') return { name: undefined, from: words[2] };
  return { name: words[1], from: words[2] === 'from' ? words[3] : undefined };
}

/** The rank of a line in its section's parser sequence: the longest keyword prefix it starts with; `no` counts as its keyword. */
function rankOf(type: string, words: readonly string[]): number {
  const keywords = RANK_WORDS.get(type) ?? [];
  const effective = words[0] === 'no' ? words.slice(1) : words;
  let best = -1;
  let bestLength = 0;
  keywords.forEach((parts, index) => {
    if (parts.length > bestLength && parts.every((part, at) => effective[at] === part)) {
      best = index;
      bestLength = parts.length;
    }
  });
  return best < 0 ? keywords.length : best;
}

/** Sorted by name, each defaults section after the one its `from` names (config-parser's sorter). */
function orderDefaults(sections: readonly Section[]): Section[] {
  const byName = new Map(sections.map((section) => [section.name, section]));
  const ordered: Section[] = [];
  const placed = new Set<string>();
  const place = (section: Section, path: Set<string>): void => {
    if (placed.has(section.name) || path.has(section.name)) return;
    path.add(section.name);
    const parent = section.from === undefined ? undefined : byName.get(section.from);
    if (parent !== undefined) place(parent, path);
    placed.add(section.name);
    ordered.push(section);
  };
  for (const section of [...sections].sort((a, b) => compare(a.name, b.name))) place(section, new Set());
  return ordered;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `text` (without DPAPI's header) as config-parser writes it back. Lines
 * before the first section that are not comments are kept in the leading
 * block, where config-parser's UnProcessed parser keeps them.
 */
export function writeBack(text: string): string {
  const leading: string[] = [];
  const sections: Section[] = [];
  let current: Section | undefined;
  let pending: string[] = [];
  const defaultsNames = new Set<string>();
  /** Where each section is in `sections`, by type and name: a lookup per header, not a scan of every section before it. */
  const positions = new Map<string, number>();
  let index = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      if (current === undefined) leading.push(line);
      else pending.push(line);
      continue;
    }
    const words = line.split(/\s+/);
    const keyword = words[0]!;
    if (SECTIONS.has(keyword)) {
      if (current !== undefined) current.trailing = pending;
      else leading.push(...pending);
      pending = [];
      const header = keyword === 'global' ? { name: '', from: undefined } : parseHeader(words);
      let name = header.name;
      if (keyword === 'defaults' && name === undefined) {
        let n = 1;
        while (defaultsNames.has(`unnamed_defaults_${n}`)) n++;
        name = `unnamed_defaults_${n}`;
      }
      if (keyword === 'defaults') defaultsNames.add(name!);
      // A later section of the same type and name replaces the earlier one (config-parser keeps them in a map).
      const key = `${keyword} ${name ?? ''}`;
      const at = positions.get(key);
      current = { type: keyword, name: name ?? '', from: header.from, lines: [], trailing: [] };
      if (at !== undefined) sections[at] = current;
      else positions.set(key, sections.push(current) - 1);
      continue;
    }
    if (current === undefined) {
      leading.push(line);
      continue;
    }
    current.lines.push({ comments: pending, text: line, rank: rankOf(current.type, words), index: index++ });
    pending = [];
  }
  if (current !== undefined) current.trailing = pending;
  else leading.push(...pending);

  const out: string[] = [...leading];
  const write = (section: Section): void => {
    const lines = [...section.lines].sort((a, b) => a.rank - b.rank || a.index - b.index);
    if (section.type === 'global' && lines.length === 0 && section.trailing.length === 0) return;
    out.push('');
    out.push(section.type === 'global' ? 'global' : [section.type, section.name, ...(section.from ? ['from', section.from] : [])].join(' '));
    for (const line of lines) {
      for (const comment of line.comments) out.push(`  ${comment}`);
      out.push(`  ${line.text}`);
    }
    for (const comment of section.trailing) out.push(`  ${comment}`);
  };
  for (const section of sections.filter((candidate) => candidate.type === 'global')) write(section);
  for (const type of SECTION_ORDER) {
    const ofType = sections.filter((section) => section.type === type);
    const ordered = type === 'defaults' ? orderDefaults(ofType) : [...ofType].sort((a, b) => compare(a.name, b.name));
    for (const section of ordered) write(section);
  }
  return `${out.join('\n')}\n`;
}
