/**
 * Just enough multipart/form-data (RFC 7578) for the storage uploads (§7):
 * parts split on the boundary, each with its Content-Disposition name and
 * filename. No nested multiparts, no transfer encodings.
 */
import { ApiError } from './http-kit.ts';

export interface MultipartPart {
  readonly name: string;
  readonly filename: string | undefined;
  readonly data: Buffer;
}

export function parseMultipart(body: Buffer, contentType: string | undefined): MultipartPart[] {
  const type = contentType ?? '';
  if (!/^multipart\/form-data\b/i.test(type)) {
    throw new ApiError(415, `unsupported media type ${JSON.stringify(type)}, only [multipart/form-data] are available`);
  }
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
  const token = boundary?.[1] ?? boundary?.[2];
  if (token === undefined) throw new ApiError(400, 'request Content-Type has no multipart boundary');
  const delimiter = Buffer.from(`--${token}`);
  const parts: MultipartPart[] = [];
  let position = body.indexOf(delimiter);
  if (position < 0) throw new ApiError(400, 'malformed multipart body: no boundary');
  for (;;) {
    position += delimiter.length;
    // `--` after a delimiter closes the body.
    if (body.subarray(position, position + 2).toString() === '--') break;
    const headersEnd = body.indexOf('\r\n\r\n', position);
    if (headersEnd < 0) throw new ApiError(400, 'malformed multipart body: part without headers');
    const headers = body.subarray(position, headersEnd).toString('utf8');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headersEnd + 4);
    if (next < 0) throw new ApiError(400, 'malformed multipart body: unterminated part');
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    if (name !== undefined) parts.push({ name, filename, data: body.subarray(headersEnd + 4, next) });
    position = next + 2;
  }
  return parts;
}
