import path from 'node:path';
import { contractPdf, formOf } from '../contracts/fixtures';
import { otpInOutbox } from '../sessions/world';

/**
 * A partner's calls to a built server (test/startup/builtServer.ts) over HTTP, with an API key:
 * JSON requests, downloads, and one contract signed the way a partner signs one.
 */

export interface Api {
  port: number;
  key: string;
}

export async function call(api: Api, method: string, route: string, body?: unknown | FormData) {
  const headers: Record<string, string> = { 'x-api-key': api.key };
  let payload: string | FormData | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const response = await fetch(`http://127.0.0.1:${api.port}/api${route}`, {
    method,
    headers,
    ...(payload !== undefined ? { body: payload } : {}),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${text}`);
  return JSON.parse(text) as { data: Record<string, unknown> };
}

/** The OTP the server's SMS job wrote for `phone`, waited for (the job queue polls). */
async function otpFor(dataDir: string, phone: string): Promise<string> {
  const smsDir = path.join(dataDir, 'outbox', 'sms');
  for (let waited = 0; ; waited += 100) {
    try {
      return otpInOutbox(smsDir, phone);
    } catch (error) {
      if (waited > 30_000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

let phones = 0;

/**
 * One contract through the API, as a partner signs one: upload, send, an `otp_sms` session,
 * the code from the outbox, confirm (a PAdES signature, then the B-LTA archive revision).
 * `writes` counts each answered write.
 */
export async function signOneContract(
  api: Api,
  dataDir: string,
  writes: number[],
): Promise<string> {
  const phone = `091${String(++phones).padStart(7, '0')}`;
  const email = `signer${phones}@partner.example`;
  const created = await call(
    api,
    'POST',
    '/contracts',
    formOf({
      file: { name: 'hop-dong.pdf', bytes: await contractPdf(`backup ${phones}`) },
      expiredAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      signers: [{ name: `Người ký ${phones}`, email, phone, order: 1 }],
    }),
  );
  writes.push(Date.now());
  const id = created.data.id as string;
  await call(api, 'POST', `/contracts/${id}/send`);
  writes.push(Date.now());
  const session = await call(api, 'POST', '/signing/initiate', {
    contractId: id,
    signerEmail: email,
    signingMethod: 'otp_sms',
  });
  const sessionId = session.data.sessionId as string;
  await call(api, 'POST', `/signing/${sessionId}/send-otp`);
  const confirmed = await call(api, 'POST', `/signing/${sessionId}/confirm`, {
    otp: await otpFor(dataDir, phone),
  });
  writes.push(Date.now());
  expect(confirmed.data.contractStatus).toBe('completed');
  return id;
}

/** GET `route` as bytes (a download); fails on any status but 200. */
export async function download(api: Api, route: string): Promise<Buffer> {
  const response = await fetch(`http://127.0.0.1:${api.port}/api${route}`, {
    headers: { 'x-api-key': api.key },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`GET ${route}: ${response.status} ${bytes}`);
  return bytes;
}
