import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/platform/config';

/** The server configuration read from environment variables (one zod schema). */
describe('server configuration', () => {
  const base = { DATA_DIR: '/tmp/esign-config' };

  it('defaults every setting that is unset or empty', () => {
    const config = loadConfig({ ...base, PORT: '', HOST: '' });
    expect(config).toMatchObject({
      serviceName: 'ESign',
      host: '127.0.0.1',
      port: 3000,
      dataDir: '/tmp/esign-config',
      databaseFile: path.join('/tmp/esign-config', 'esign.sqlite'),
      publicUrl: 'http://127.0.0.1:3000',
      appUrl: 'http://127.0.0.1:3000/app',
      agentDownloadUrl: 'http://127.0.0.1:3000/agent',
      environment: 'development',
      sandbox: false,
      jwtSecret: undefined,
      secretKey: undefined,
      logLevel: 'info',
      trustProxy: false,
      rateLimits: { auth: 10, api: 100, upload: 10 },
    });
    expect(config.outboundAllowlist.hosts.size).toBe(0);
  });

  it('reads numbers, flags, URLs without trailing slashes and the allowlist', () => {
    const config = loadConfig({
      ...base,
      PORT: '8080',
      PUBLIC_URL: 'https://esign.example.vn/',
      APP_URL: 'https://app.example.vn//',
      TRUST_PROXY: 'true',
      RATE_LIMIT_API: '5',
      OUTBOUND_ALLOWLIST: 'hooks.partner.example, 10.1.0.0/16',
      LOG_LEVEL: 'warn',
      AGENT_DOWNLOAD_URL: ' https://downloads.example.vn/agent/ ',
    });
    expect(config).toMatchObject({
      port: 8080,
      publicUrl: 'https://esign.example.vn',
      appUrl: 'https://app.example.vn',
      // A link for people: kept as written (trailing slash included), spaces trimmed.
      agentDownloadUrl: 'https://downloads.example.vn/agent/',
      trustProxy: true,
      logLevel: 'warn',
      rateLimits: { api: 5 },
    });
    expect([...config.outboundAllowlist.hosts]).toEqual(['hooks.partner.example']);
    expect(config.outboundAllowlist.ranges).toHaveLength(1);
  });

  it('takes the sandbox environment from SANDBOX=1 unless APP_ENV says otherwise', () => {
    expect(loadConfig({ ...base, SANDBOX: '1' })).toMatchObject({
      environment: 'sandbox',
      sandbox: true,
    });
    expect(loadConfig({ ...base, APP_ENV: 'development', SANDBOX: '1' })).toMatchObject({
      environment: 'development',
      sandbox: true,
    });
    expect(loadConfig({ ...base, APP_ENV: 'sandbox' })).toMatchObject({ sandbox: true });
    expect(
      loadConfig({ ...base, APP_ENV: 'production', SANDBOX: '0', TSA_URL: 'https://tsa.example' }),
    ).toMatchObject({
      environment: 'production',
      sandbox: false,
    });
  });

  it.each([
    [{ PORT: 'x' }, 'PORT must be a positive integer, got "x"'],
    [{ PORT: '1e3' }, 'PORT must be a positive integer, got "1e3"'],
    [{ PORT: '70000' }, 'PORT must be a port number from 1 to 65535, got "70000"'],
    [{ RATE_LIMIT_AUTH: '0' }, 'RATE_LIMIT_AUTH must be a positive integer, got "0"'],
    [{ APP_ENV: 'prod' }, 'APP_ENV must be production, development or sandbox, got "prod"'],
    [{ SANDBOX: 'yes' }, 'SANDBOX must be 0, 1, false or true, got "yes"'],
    [{ TRUST_PROXY: 'on' }, 'TRUST_PROXY must be 0, 1, false or true, got "on"'],
    [
      { LOG_LEVEL: 'verbose' },
      'LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent',
    ],
    [{ PUBLIC_URL: 'esign.example.vn' }, 'PUBLIC_URL must be an absolute http or https URL'],
    [{ APP_URL: 'ftp://files.example' }, 'APP_URL must be an absolute http or https URL'],
    [
      { AGENT_DOWNLOAD_URL: 'javascript:alert(1)' },
      'AGENT_DOWNLOAD_URL must be an absolute http or https URL',
    ],
    [{ APP_ENV: 'production', SANDBOX: '1' }, 'SANDBOX cannot be 1 with APP_ENV=production'],
    [{ APP_ENV: 'sandbox', SANDBOX: '0' }, 'SANDBOX cannot be 0 with APP_ENV=sandbox'],
    [{ OUTBOUND_ALLOWLIST: '10.0.0.0/99' }, 'OUTBOUND_ALLOWLIST: "10.0.0.0/99" is not an IP'],
    [
      { MAIL_TRANSPORT: 'smtp', SMTP_HOST: '  ', MAIL_FROM: 'a@b.example' },
      'SMTP_HOST is required when MAIL_TRANSPORT=smtp',
    ],
    [{ SMTP_PORT: '0' }, 'SMTP_PORT must be a positive integer, got "0"'],
    [{ SMS_HTTP_HEADERS: '{"Cookie":"a=b"}' }, 'SMS_HTTP_HEADERS may not set Cookie'],
    [{ METRICS_TOKEN: 'too-short' }, 'METRICS_TOKEN must be at least 16 characters'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });

  it('reads the webhook job tuning (WEBHOOK_*), unset by default, and refuses a bad value', () => {
    expect(loadConfig(base).webhookJobs).toEqual({
      concurrency: undefined,
      pollIntervalMs: undefined,
      leaseMs: undefined,
    });
    const tuned = loadConfig({
      ...base,
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_LEASE_SECONDS: '45',
    });
    expect(tuned.webhookJobs).toEqual({ concurrency: 4, pollIntervalMs: 100, leaseMs: 45_000 });
    expect(() => loadConfig({ ...base, WEBHOOK_CONCURRENCY: '0' })).toThrow(
      new ConfigError('WEBHOOK_CONCURRENCY must be a positive integer, got "0"'),
    );
  });

  it('counts a MAIL_FROM of spaces as unset', () => {
    expect(loadConfig({ ...base, MAIL_FROM: '   ' }).notify.mailFrom).toBe(
      'ESign <no-reply@localhost>',
    );
  });

  it('refuses PostgreSQL without SECRET_KEY: instances on one database share one master secret', () => {
    const url = 'postgres://esign@db.internal:5432/esign';
    expect(() => loadConfig({ ...base, DATABASE_URL: url })).toThrow(
      new ConfigError(
        'SECRET_KEY is required when DATABASE_URL names PostgreSQL: every instance must share one master secret (a master.key under each DATA_DIR would differ)',
      ),
    );
    expect(() => loadConfig({ ...base, DATABASE_URL: 'postgresql://db/esign' })).toThrow(
      'SECRET_KEY is required when DATABASE_URL names PostgreSQL',
    );
    expect(
      loadConfig({ ...base, DATABASE_URL: url, SECRET_KEY: 'one secret for every instance' }),
    ).toMatchObject({ databaseUrl: url, secretKey: 'one secret for every instance' });
    // Without DATABASE_URL nothing changes: the master key file under DATA_DIR as before.
    expect(loadConfig(base).databaseUrl).toBeUndefined();
  });

  it('ignores variables it does not read', () => {
    expect(loadConfig({ ...base, EDITOR: 'vi', PORT_OF_CALL: 'x' }).port).toBe(3000);
  });

  it('reads the file store (FILE_STORE, S3_*): local by default; s3 needs a bucket; the secret is never in the config object', () => {
    expect(loadConfig(base)).toMatchObject({ fileStore: 'local', s3: undefined });
    const s3 = {
      ...base,
      FILE_STORE: 's3',
      S3_ENDPOINT: 'http://127.0.0.1:9000/',
      S3_BUCKET: 'esign-files',
      S3_ACCESS_KEY_ID: 'minio',
      S3_SECRET_ACCESS_KEY: 'a-secret-that-never-shows',
      S3_FORCE_PATH_STYLE: '1',
    };
    const config = loadConfig(s3);
    expect(config.fileStore).toBe('s3');
    expect(config.s3).toMatchObject({
      endpoint: 'http://127.0.0.1:9000',
      bucket: 'esign-files',
      region: 'us-east-1',
      forcePathStyle: true,
      presignedDownloads: false,
    });
    expect(config.s3?.credentials?.secretAccessKey()).toBe('a-secret-that-never-shows');
    expect(JSON.stringify(config)).not.toContain('a-secret-that-never-shows');
    for (const [env, message] of [
      [{ ...base, FILE_STORE: 's3' }, 'S3_BUCKET is required when FILE_STORE=s3'],
      [{ ...base, FILE_STORE: 'gcs' }, 'FILE_STORE must be local or s3, got "gcs"'],
      [{ ...s3, S3_BUCKET: 'Esign_Files' }, 'S3_BUCKET must be a bucket name'],
      [{ ...s3, S3_ENDPOINT: 'minio:9000' }, 'S3_ENDPOINT must be an absolute http or https URL'],
      [
        { ...s3, S3_SECRET_ACCESS_KEY: '' },
        'S3_SECRET_ACCESS_KEY is required when S3_ACCESS_KEY_ID is set',
      ],
      [
        { ...s3, S3_ACCESS_KEY_ID: '' },
        'S3_ACCESS_KEY_ID is required when S3_SECRET_ACCESS_KEY is set',
      ],
      [
        { ...base, S3_PRESIGNED_DOWNLOADS: '1' },
        'S3_PRESIGNED_DOWNLOADS can only be 1 with FILE_STORE=s3',
      ],
    ] as const) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    }
  });
});
