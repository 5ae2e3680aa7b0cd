/**
 * A multipart/form-data body with one file field, as DPAPI's storage
 * endpoints take uploads (field `file_upload`, the storage name in the part's
 * filename). Written by hand because the body is small and fully known, and
 * a buffer with an exact Content-Length is what go-swagger parses best.
 */
import { randomBytes } from 'node:crypto';

export interface MultipartBody {
  readonly contentType: string;
  readonly body: Buffer;
}

export function multipartFile(field: string, filename: string, content: string | Uint8Array): MultipartBody {
  const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  let boundary = newBoundary();
  // A boundary must not occur in the content; 96 random bits make that
  // practically impossible, but a PEM or map file is cheap to check.
  while (data.includes(boundary)) boundary = newBoundary();
  const head = [
    `--${boundary}`,
    `Content-Disposition: form-data; name="${escapeQuoted(field)}"; filename="${escapeQuoted(filename)}"`,
    'Content-Type: application/octet-stream',
    '',
    '',
  ].join('\r\n');
  const tail = `\r\n--${boundary}--\r\n`;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat([Buffer.from(head, 'utf8'), data, Buffer.from(tail, 'utf8')]),
  };
}

function newBoundary(): string {
  return `haproxy-template-ic-${randomBytes(12).toString('hex')}`;
}

/** The WHATWG form encoding of names in Content-Disposition: a quote or line break would end the header. */
function escapeQuoted(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
