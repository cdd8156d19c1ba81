import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics: one registry, one object the app's domains count into
 * (`metrics.signatures.inc({ method, level })`). Each counter is incremented in exactly one
 * place, after the fact it counts is certain (a committed signature, a recorded OTP failure, an
 * error answer written); docs/operations.md lists them. The engine (`signing/`, `pdf/`) never
 * imports this: the app counts around it. Served at GET /metrics (operations/routes.ts).
 */
const registry = new Registry();
const registers = [registry];
let processMetrics = false;

/**
 * The Prometheus text of every metric. Node's process metrics (CPU, memory, event loop lag,
 * handles) join at the first scrape: a process nobody scrapes (the operator CLI, a test) never
 * starts their event loop monitor.
 */
export function metricsText(): Promise<string> {
  if (!processMetrics) {
    collectDefaultMetrics({ register: registry, prefix: 'esign_' });
    processMetrics = true;
  }
  return registry.metrics();
}

export const metricsContentType = registry.contentType;

export const metrics = {
  /** Every request Hono answered, by route pattern (never the raw path: ids and tokens stay out). */
  httpRequests: new Counter({
    name: 'esign_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  }),
  httpDuration: new Histogram({
    name: 'esign_http_request_duration_seconds',
    help: 'Time from the request reaching the app to its answer being ready, by route pattern',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  }),
  /** Committed signatures, by signing method and the PAdES level their revision proves. */
  signatures: new Counter({
    name: 'esign_signatures_total',
    help: 'Signatures committed, by signing method and PAdES level',
    labelNames: ['method', 'level'] as const,
    registers,
  }),
  /** Wrong OTP codes (each recorded and counted against the session and the signer). */
  otpFailures: new Counter({
    name: 'esign_otp_failures_total',
    help: 'Wrong one-time codes entered, by signing method',
    labelNames: ['method'] as const,
    registers,
  }),
  /** Error answers whose code is about a PDF (NOT_A_PDF, PDF_ENCRYPTED, ...), by code. */
  pdfRefusals: new Counter({
    name: 'esign_pdf_refusals_total',
    help: 'Requests refused because of a PDF, by error code',
    labelNames: ['code'] as const,
    registers,
  }),
  /** Job attempts that failed: `retry` when the job runs again later, `failed` when it gave up. */
  jobFailures: new Counter({
    name: 'esign_job_failures_total',
    help: 'Failed job attempts, by job kind and outcome (retry or failed)',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  }),
  /** Read from the jobs table at each scrape (operations/routes.ts). */
  jobsPending: new Gauge({
    name: 'esign_jobs_pending',
    help: 'Jobs waiting in the queue (due now or scheduled for a retry), by kind',
    labelNames: ['kind'] as const,
    registers,
  }),
  jobsFailed: new Gauge({
    name: 'esign_jobs_failed',
    help: 'Jobs that used all their attempts and will not run again, by kind',
    labelNames: ['kind'] as const,
    registers,
  }),
};

/** One request Hono answered, by route pattern (`/api/contracts/:id`); `ms` its time in the app. */
export function countRequest(method: string, route: string, status: number, ms: number): void {
  const labels = { method, route, status: String(status) };
  metrics.httpRequests.inc(labels);
  metrics.httpDuration.observe(labels, ms / 1000);
}

/** An error code that refuses a PDF: its name says PDF (NOT_A_PDF, FILE_NOT_PDF, PDF_*). */
const pdfCode = /(^|_)PDF(_|$)/;

/**
 * Counts an error answer: called by the HTTP edge's one function that turns a coded error into
 * an answer (http/errorStatuses.ts errorAnswer), once per answer written.
 */
export function countErrorAnswer(code: string): void {
  if (pdfCode.test(code)) metrics.pdfRefusals.inc({ code });
}
