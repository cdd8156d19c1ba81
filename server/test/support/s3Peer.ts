import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { loadConfig, type S3Settings } from '../../src/platform/config';
import { s3Client } from '../../src/storage/s3FileStore';

/**
 * A real S3 protocol peer for the tests: s3rver 3.7 on 127.0.0.1 (a free port) over a temp
 * folder, with one bucket. Objects land as files in that folder, so a test compares the stored
 * bytes themselves.
 */
export interface S3Peer {
  endpoint: string;
  directory: string;
  bucket: string;
  /** The settings a harness or CLI needs for FILE_STORE=s3 on this peer. */
  env: Record<string, string>;
  settings: S3Settings;
  /** Where s3rver keeps an object's bytes on disk. */
  objectFile(key: string): string;
  createBucket(name: string): Promise<void>;
  close(): Promise<void>;
}

/** s3rver's fixed development credentials: any pair signs, these are the documented ones. */
const accessKeyId = 'S3RVER';
const secretAccessKey = 'S3RVER';

export async function startS3Peer(bucket = 'esign-files'): Promise<S3Peer> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'esign-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const env = {
    S3_ENDPOINT: endpoint,
    S3_BUCKET: bucket,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: accessKeyId,
    S3_SECRET_ACCESS_KEY: secretAccessKey,
    S3_FORCE_PATH_STYLE: '1',
  };
  const settings = loadConfig(env).s3!;
  return {
    endpoint,
    directory,
    bucket,
    env,
    settings,
    objectFile: (key) => path.join(directory, bucket, `${key}._S3rver_object`),
    createBucket: async (name) => {
      const client = s3Client({ ...settings, bucket: name });
      await client.send(new CreateBucketCommand({ Bucket: name }));
      client.destroy();
    },
    close: async () => {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
