// Steps of the public workflow, done through raw HTTP as any client would.
import { request } from 'node:http';
import { UploadTarget } from '../../shared/api/upload.js';
import { Job } from '../../shared/api/job.js';
import type { Answer } from './http.js';
import { api } from './http.js';

export type Call = ReturnType<typeof api>;

/** PUT bytes to a presigned URL with node:http (fetch hides Content-Length control). */
export function putBytes(
  url: string,
  bytes: Buffer,
  contentType = 'application/octet-stream',
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'PUT',
      headers: { 'content-type': contentType, 'content-length': String(bytes.length), ...headers },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // keep text
        }
        resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), body });
      });
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

export async function newUpload(call: Call, fileName = 'scene.blend'): Promise<UploadTarget> {
  const fileType = fileName.endsWith('.zip') ? 'zip' : 'blend';
  const r = await call('POST', '/uploads', { fileName, fileType });
  if (r.status !== 201) throw new Error(`POST /uploads: ${r.status} ${JSON.stringify(r.body)}`);
  return UploadTarget.parse(r.body);
}

/** Upload + create: a job in `created`. */
export async function createJob(call: Call, bytes = Buffer.from('BLENDER-v304 fake scene bytes')): Promise<Job> {
  const t = await newUpload(call);
  const put = await putBytes(t.uploadUrl, bytes);
  if (put.status !== 200) throw new Error(`PUT: ${put.status} ${JSON.stringify(put.body)}`);
  const r = await call('POST', '/jobs', { slug: t.slug });
  if (r.status !== 201) throw new Error(`POST /jobs: ${r.status} ${JSON.stringify(r.body)}`);
  return Job.parse(r.body);
}
