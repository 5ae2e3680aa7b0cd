import { expect } from 'chai';
import { createLogger, logLevel, logSettingsFromEnvironment, type LogSettings } from '../../../lib/telemetry/logger.ts';
import { Redactor } from '../../../lib/telemetry/redaction.ts';
import { LEAF_KEY } from '../../support/tls-fixture.ts';

function capture(settings: Partial<LogSettings> = {}, redactor = new Redactor()) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', format: 'json', write: (line) => void lines.push(line), ...settings }, redactor);
  return { logger, lines, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('logger', () => {
  it('writes JSON lines with the stage and endpoint of child loggers', () => {
    const { logger, records } = capture();
    logger.child({ stage: 'deploy' }).child({ endpoint: '10.0.0.5:5555' }).info({ revision: 3, mode: 'runtime' }, 'deployed revision 3');
    logger.child({ stage: 'render' }).debug('rendered revision 3');
    expect(records()).to.have.length(1);
    expect(records()[0]).to.deep.include({ level: 30, stage: 'deploy', endpoint: '10.0.0.5:5555', revision: 3, mode: 'runtime', msg: 'deployed revision 3' });
    expect(records()[0]?.['time']).to.match(/^\d{4}-\d\d-\d\dT/);
  });

  it('honours LOG_LEVEL and names it when its value is wrong', () => {
    const { logger, records } = capture({ level: logLevel('DEBUG') });
    logger.debug('rendered');
    expect(records().map((r) => r['msg'])).to.deep.equal(['rendered']);
    expect(logLevel(undefined)).to.equal('info');
    expect(() => logLevel('verbose')).to.throw('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "verbose"');
  });

  it('keeps credentials and key material out of every line, whatever carries them', () => {
    const redactor = new Redactor();
    redactor.add('dpapi-secret-pw');
    const { logger, lines } = capture({}, redactor);
    logger.error({ password: 'dpapi-secret-pw', nested: { authorization: 'Basic abc' } }, 'login failed');
    logger.error(`could not load the key ${LEAF_KEY}`);
    logger.warn({ error: 'rejected dpapi-secret-pw' }, 'retrying');
    const all = lines.join('');
    expect(all).to.not.include('dpapi-secret-pw').and.not.include('Basic abc').and.not.include(LEAF_KEY.split('\n')[1]);
    expect(all).to.include('[REDACTED]');
  });

  it('writes human-readable lines for a terminal, stage and endpoint first', () => {
    const { logger, lines } = capture({ format: 'pretty', colorize: false });
    logger.child({ stage: 'deploy' }).child({ endpoint: 'local' }).info({ revision: 3 }, 'deployed revision 3 to local: runtime');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[deploy local\] deployed revision 3 to local: runtime\n$/);
  });

  it('chooses the terminal format when the output is a terminal', () => {
    expect(logSettingsFromEnvironment({ LOG_LEVEL: 'warn' }, { isTTY: true, write: () => true })).to.deep.include({ level: 'warn', format: 'pretty', colorize: true });
    expect(logSettingsFromEnvironment({}, { write: () => true })).to.deep.include({ level: 'info', format: 'json' });
  });
});
