import { expect } from 'chai';
import { runtimeServerFields } from '../../../lib/deploy/runtime-server-fields.ts';

/** A server line's options as the Data Plane API's runtime_add_server fields: none dropped, none the API cannot carry sent. */
describe('runtimeServerFields', () => {
  const server = (...options: string[]) => ({ name: 'srv-10.0.0.1-8080', address: '10.0.0.1', port: 8080, options, weight: undefined, disabled: false });

  it('carries what backend settings put on a server line: TLS with a CA, ALPN h2, maxconn, the check interval', () => {
    const options = ['check', 'inter', '500', 'maxconn', '5', 'ssl', 'verify', 'required', 'ca-file', 'general/x__ca.pem', 'sni', 'str(web.example.com)', 'alpn', 'h2', 'check-alpn', 'h2'];
    expect(runtimeServerFields(server(...options))).to.deep.equal({
      check: 'enabled',
      inter: 500,
      maxconn: 5,
      ssl: 'enabled',
      verify: 'required',
      ssl_cafile: 'general/x__ca.pem',
      sni: 'str(web.example.com)',
      alpn: 'h2',
      check_alpn: 'h2',
    });
  });

  it('carries h2 in clear text, and leaves weight and state to the calls that set them', () => {
    expect(runtimeServerFields(server('check', 'proto', 'h2', 'check-proto', 'h2', 'weight', '3', 'disabled'))).to.deep.equal({ check: 'enabled', proto: 'h2', check_proto: 'h2' });
  });

  it('turns time units into the milliseconds the API takes', () => {
    expect(runtimeServerFields(server('inter', '2s', 'fastinter', '1500ms'))).to.deep.equal({ inter: 2000, fastinter: 1500 });
  });

  it('refuses an option the API cannot carry, rather than adding the server without it', () => {
    expect(() => runtimeServerFields(server('npn', 'h2'))).to.throw('option "npn" cannot be sent');
    expect(() => runtimeServerFields(server('maxconn'))).to.throw('option "maxconn" cannot be sent');
  });
});
