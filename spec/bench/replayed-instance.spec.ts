import { expect } from 'chai';
import { AnswerClock } from '../../bench/answer-clock.ts';
import { scriptOf, startReplayedInstance, type ReplayedInstance } from '../../bench/replayed-instance.ts';
import { DataplaneClient } from '../../lib/dataplane/client.ts';
import { DataplaneError } from '../../lib/dataplane/errors.ts';
import { multipartFile } from '../../lib/dataplane/multipart.ts';
import type { Exchange } from '../../spec/support/dataplane-emulator/index.ts';

/** An exchange as the emulator reports it, `serviceMs` long. */
function exchange(
  request: Pick<Exchange, 'method' | 'path' | 'query' | 'requestHeaders' | 'requestBody'>,
  answer: Pick<Exchange, 'status' | 'responseHeaders' | 'responseBody'>,
  serviceMs: number,
): Exchange {
  return { ...request, ...answer, receivedAt: 1_000, answeredAt: 1_000 + serviceMs };
}

describe('bench stand-in instances', () => {
  describe('AnswerClock', () => {
    it('runs each callback at its due time or just after, in due order, never before', async () => {
      const clock = new AnswerClock();
      const start = performance.now();
      const ran: { due: number; at: number }[] = [];
      const done = new Promise<void>((resolve) => {
        for (const offset of [12, 3, 7, 0]) {
          const due = start + offset;
          clock.at(due, () => {
            ran.push({ due, at: performance.now() });
            if (ran.length === 4) resolve();
          });
        }
      });
      await done;
      expect(ran.map(({ due }) => due - start)).to.deep.equal([0, 3, 7, 12]);
      for (const { due, at } of ran) expect(at).to.be.at.least(due);
    });
  });

  describe('startReplayedInstance', () => {
    let instance: ReplayedInstance;
    let client: DataplaneClient;
    const recordedUpload = multipartFile('file_upload', 'host.map', 'a.example.com app\n');

    beforeEach(async () => {
      const script = scriptOf([
        exchange(
          { method: 'GET', path: '/v3/services/haproxy/configuration/version', query: '', requestHeaders: {}, requestBody: Buffer.alloc(0) },
          { status: 200, responseHeaders: { 'configuration-version': '7', 'content-type': 'application/json' }, responseBody: '7\n' },
          40,
        ),
        exchange(
          {
            method: 'POST',
            path: '/v3/services/haproxy/storage/maps',
            query: 'skip_reload=true',
            requestHeaders: { 'content-type': recordedUpload.contentType },
            requestBody: recordedUpload.body,
          },
          { status: 201, responseHeaders: { 'configuration-version': '7', 'content-type': 'application/json' }, responseBody: '{"storage_name":"host.map"}\n' },
          5,
        ),
      ]);
      instance = await startReplayedInstance(script, new AnswerClock());
      client = new DataplaneClient({ url: instance.url, username: 'admin', password: 'secret-password' });
    });

    afterEach(async () => {
      client.close();
      await instance.stop();
    });

    it('answers the recorded requests as recorded, no sooner than the real instance did', async () => {
      const started = performance.now();
      expect(await client.configurationVersion()).to.equal(7);
      expect(performance.now() - started).to.be.at.least(40);
      expect(client.lastVersion).to.equal(7);
      // The client picks its own multipart boundary; the upload is the same all the same.
      const upload = await client.createStorageFile('maps', 'host.map', 'a.example.com app\n', { skipReload: true });
      expect(upload).to.deep.include({ status: 201, storageName: 'host.map' });
      expect(instance.requests()).to.equal(2);
      expect(instance.mismatches()).to.deep.equal([]);
    });

    it('answers 500 to a request the script does not have next, and says what it expected, without the credentials', async () => {
      const error = await client.createStorageFile('maps', 'host.map', 'other content\n', { skipReload: true }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).to.be.instanceOf(DataplaneError);
      expect((error as DataplaneError).status).to.equal(500);
      const [mismatch, ...others] = instance.mismatches();
      expect(others).to.deep.equal([]);
      expect(mismatch).to.match(
        /^request 1: expected GET \/v3\/services\/haproxy\/configuration\/version body=\w+, got POST \/v3\/services\/haproxy\/storage\/maps\?skip_reload=true body=\w+$/,
      );
      expect(mismatch).to.not.include('secret-password');
      expect(mismatch).to.not.include(Buffer.from('admin:secret-password').toString('base64'));
    });
  });
});
