/**
 * A presigned S3 GET URL (AWS Signature Version 4, query-string authentication), what the
 * Service's RemoteFileS3 strategy makes with the AWS SDK to read an archive from a bucket
 * (`POST /projects/remote-import-s3`). Virtual-hosted style: `https://<bucket>.s3.<region>.amazonaws.com/<key>`.
 */
import crypto from 'node:crypto';

const hmac = (key: Buffer | string, text: string) => crypto.createHmac('sha256', key).update(text, 'utf8').digest();
const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

/** RFC 3986 encoding as SigV4 wants it (`/` kept in the path). */
function encode(text: string, keepSlash = false): string {
  const out = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? out.replace(/%2F/g, '/') : out;
}

export interface S3Object {
  region: string;
  bucket: string;
  key: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export function presignedGetUrl(o: S3Object, now = new Date(), expiresSeconds = 3600): string {
  const host = `${o.bucket}.s3.${o.region}.amazonaws.com`;
  const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${o.region}/s3/aws4_request`;
  const query: [string, string][] = [
    ['X-Amz-Algorithm', 'AWS4-HMAC-SHA256'],
    ['X-Amz-Credential', `${o.accessKeyId}/${scope}`],
    ['X-Amz-Date', amzDate],
    ['X-Amz-Expires', String(expiresSeconds)],
    ['X-Amz-SignedHeaders', 'host'],
  ];
  const canonicalQuery = query.map(([k, v]) => `${encode(k)}=${encode(v)}`).sort().join('&');
  const canonicalPath = `/${encode(o.key, true)}`;
  const canonical = ['GET', canonicalPath, canonicalQuery, `host:${host}`, '', 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${o.secretAccessKey}`, day), o.region), 's3'), 'aws4_request');
  const signature = crypto.createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  return `https://${host}${canonicalPath}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}
