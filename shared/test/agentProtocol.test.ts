import { AGENT_PROTOCOL_VERSION } from '../src/agentEndpoint';
import {
  AGENT_ERROR_CODES,
  AGENT_ERROR_MESSAGES,
  AGENT_MAX_MESSAGE_LENGTH,
  type AgentMessage,
  isAgentRequest,
  negotiateAgentProtocolVersion,
  parseAgentMessage,
} from '../src/agentProtocol';

const digest = Buffer.alloc(32, 7).toString('base64');
const der = Buffer.from([0x30, 0x82, 0x01, 0x0a, 0x02, 0x01]).toString('base64');

function parsed(message: unknown): AgentMessage {
  const result = parseAgentMessage(JSON.stringify(message));
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  return result.message;
}

function refusal(message: unknown): { id: string | null; reason: string } {
  const result = parseAgentMessage(typeof message === 'string' ? message : JSON.stringify(message));
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.message)}`);
  return { id: result.id, reason: result.reason };
}

const certificate = {
  certificateId: 'slot-0:01ab',
  certificate: der,
  subject: 'CN=Nguyễn Văn Ánh,O=Công ty A,C=VN',
  issuer: 'CN=VNPT Certification Authority,O=VNPT Group,C=VN',
  serialNumber: '5401436C95272A4ACE00F4DC51F84EE9',
  notBefore: '2025-01-01T00:00:00Z',
  notAfter: '2027-01-01T00:00:00.000Z',
  tokenLabel: 'VNPT-CA',
  keyId: '01ab',
};

const sign = {
  id: 'r3',
  type: 'sign',
  documentDigest: digest,
  certificateId: 'slot-0:01ab',
  documentTitle: 'Hợp đồng lao động số 12/2025',
  requester: { origin: 'https://esign.example.vn', serviceName: 'ESign', sessionId: 'ses_1' },
};

describe('agent protocol: valid messages', () => {
  it('speaks version 1', () => {
    expect(AGENT_PROTOCOL_VERSION).toBe(1);
  });

  it('reads hello and hello.ok', () => {
    expect(parsed({ id: 'r1', type: 'hello', versions: [1, 2] })).toEqual({
      id: 'r1',
      type: 'hello',
      versions: [1, 2],
    });
    const ok = {
      id: 'r1',
      type: 'hello.ok',
      version: 1,
      agent: { name: 'ESign Agent', version: '0.1.0', platform: 'linux' },
    };
    expect(parsed(ok)).toEqual(ok);
  });

  it('reads certificates.list and its result', () => {
    expect(parsed({ id: 'r2', type: 'certificates.list' })).toEqual({
      id: 'r2',
      type: 'certificates.list',
    });
    const result = { id: 'r2', type: 'certificates.list.result', certificates: [certificate] };
    expect(parsed(result)).toEqual(result);
    expect(parsed({ ...result, certificates: [] })).toEqual({ ...result, certificates: [] });
  });

  it('reads sign, with and without a session id', () => {
    expect(parsed(sign)).toEqual(sign);
    const requester = { origin: 'http://127.0.0.1:3000', serviceName: 'ESign' };
    expect(parsed({ ...sign, requester })).toEqual({ ...sign, requester });
  });

  it('reads sign.result', () => {
    const result = {
      id: 'r3',
      type: 'sign.result',
      signedHash: Buffer.alloc(256, 1).toString('base64'),
      certificateChain: [der, der],
      timestampToken: der,
    };
    expect(parsed(result)).toEqual(result);
  });

  it.each(AGENT_ERROR_CODES)('reads an error with code %s', (code) => {
    const error = { id: 'r4', type: 'error', code, message: 'Sai mã PIN' };
    expect(parsed(error)).toEqual(error);
  });

  it('reads an error answering a message without a readable id, and supported versions', () => {
    const error = {
      id: null,
      type: 'error',
      code: 'UNSUPPORTED_VERSION',
      message: 'no common version',
      supportedVersions: [1],
    };
    expect(parsed(error)).toEqual(error);
  });

  it('leaves unknown fields out', () => {
    expect(parsed({ id: 'r1', type: 'hello', versions: [1], extra: { deep: true } })).toEqual({
      id: 'r1',
      type: 'hello',
      versions: [1],
    });
  });

  it('tells requests from responses', () => {
    expect(isAgentRequest(parsed(sign))).toBe(true);
    expect(isAgentRequest(parsed({ id: 'x', type: 'error', code: 'INTERNAL', message: '' }))).toBe(
      false,
    );
  });
});

describe('agent protocol: invalid messages', () => {
  it.each([
    ['not JSON', '{"id":', null, 'message is not valid JSON'],
    ['an array', '[]', null, 'message must be a JSON object'],
    ['a string', '"hello"', null, 'message must be a JSON object'],
    ['no id', { type: 'hello', versions: [1] }, null, 'id must be a string'],
    ['an empty id', { id: '', type: 'hello', versions: [1] }, null, 'id must be 1 to 128'],
    ['a numeric id', { id: 5, type: 'hello', versions: [1] }, null, 'id must be a string'],
    ['a null id outside errors', { id: null, type: 'hello', versions: [1] }, null, 'id must be'],
    ['an unknown type', { id: 'a', type: 'pin.submit' }, 'a', 'type must be one of hello,'],
    ['no versions', { id: 'a', type: 'hello' }, 'a', 'versions must be an array'],
    ['empty versions', { id: 'a', type: 'hello', versions: [] }, 'a', 'versions must have 1'],
    ['a fractional version', { id: 'a', type: 'hello', versions: [1.5] }, 'a', 'versions[0] must'],
    ['a string version', { id: 'a', type: 'hello', versions: ['1'] }, 'a', 'versions[0] must'],
    [
      'a digest of 31 bytes',
      { ...sign, documentDigest: Buffer.alloc(31).toString('base64') },
      'r3',
      'documentDigest must encode 32 bytes',
    ],
    [
      'a hex digest (which reads as 48 bytes of base64)',
      { ...sign, documentDigest: 'ab'.repeat(32) },
      'r3',
      'documentDigest must encode 32 bytes',
    ],
    [
      'an unpadded digest',
      { ...sign, documentDigest: digest.replace('=', '') },
      'r3',
      'documentDigest must be padded',
    ],
    [
      'a base64url digest',
      { ...sign, documentDigest: `${Buffer.alloc(32, 0xfb).toString('base64url')}=` },
      'r3',
      'documentDigest must be padded',
    ],
    [
      'a digest with a newline',
      { ...sign, documentDigest: `${digest.slice(0, 20)}\n${digest.slice(20)}` },
      'r3',
      'documentDigest must be padded',
    ],
    ['no document title', { ...sign, documentTitle: '' }, 'r3', 'documentTitle must be 1 to 1000'],
    ['no requester', { ...sign, requester: undefined }, 'r3', 'requester must be an object'],
    [
      'an origin with a path',
      { ...sign, requester: { origin: 'https://a.vn/sign', serviceName: 'x' } },
      'r3',
      'requester.origin must be an origin',
    ],
    [
      'an origin with a trailing slash',
      { ...sign, requester: { origin: 'https://a.vn/', serviceName: 'x' } },
      'r3',
      'requester.origin must be an origin',
    ],
    [
      'an upper-case origin',
      { ...sign, requester: { origin: 'https://A.vn', serviceName: 'x' } },
      'r3',
      'requester.origin must be an origin',
    ],
    [
      'a file origin',
      { ...sign, requester: { origin: 'file:///tmp/a.html', serviceName: 'x' } },
      'r3',
      'requester.origin must be an origin',
    ],
    [
      'a numeric session id',
      { ...sign, requester: { ...sign.requester, sessionId: 7 } },
      'r3',
      'requester.sessionId must be a string',
    ],
    [
      'a chain without certificates',
      { id: 'b', type: 'sign.result', signedHash: der, certificateChain: [], timestampToken: der },
      'b',
      'certificateChain must have 1 to 10',
    ],
    [
      'a chain entry that is not base64',
      {
        id: 'b',
        type: 'sign.result',
        signedHash: der,
        certificateChain: [der, 'MII*'],
        timestampToken: der,
      },
      'b',
      'certificateChain[1] must be padded',
    ],
    [
      'an empty signature',
      {
        id: 'b',
        type: 'sign.result',
        signedHash: '',
        certificateChain: [der],
        timestampToken: der,
      },
      'b',
      'signedHash must encode 1 to 1024 bytes',
    ],
    [
      'no timestamp token',
      { id: 'b', type: 'sign.result', signedHash: der, certificateChain: [der] },
      'b',
      'timestampToken must be a string',
    ],
    [
      'an unknown error code',
      { id: 'c', type: 'error', code: 'PIN_WRONG', message: '' },
      'c',
      'code must be one of PIN_INCORRECT,',
    ],
    [
      'an error without message',
      { id: 'c', type: 'error', code: 'INTERNAL' },
      'c',
      'message must be a string',
    ],
    [
      'a certificate with a local time',
      {
        id: 'd',
        type: 'certificates.list.result',
        certificates: [{ ...certificate, notAfter: '2027-01-01T07:00:00+07:00' }],
      },
      'd',
      'certificates[0].notAfter must be an ISO 8601 UTC time',
    ],
    [
      'a certificate with an impossible date',
      {
        id: 'd',
        type: 'certificates.list.result',
        certificates: [{ ...certificate, notBefore: '2025-13-40T00:00:00Z' }],
      },
      'd',
      'certificates[0].notBefore is not a valid date',
    ],
    [
      'a certificate with an odd key id',
      {
        id: 'd',
        type: 'certificates.list.result',
        certificates: [{ ...certificate, keyId: 'abc' }],
      },
      'd',
      'certificates[0].keyId must be hexadecimal bytes',
    ],
    [
      'a certificate without serial',
      {
        id: 'd',
        type: 'certificates.list.result',
        certificates: [{ ...certificate, serialNumber: undefined }],
      },
      'd',
      'certificates[0].serialNumber must be a string',
    ],
    [
      'a hello.ok without agent',
      { id: 'e', type: 'hello.ok', version: 1 },
      'e',
      'agent must be an object',
    ],
  ])('refuses %s', (_name, message, id, reason) => {
    const result = refusal(message);
    expect(result.id).toBe(id);
    expect(result.reason).toContain(reason);
  });

  it('refuses base64 whose unused bits are set (a second spelling of the same bytes)', () => {
    const oneByte = Buffer.from([0xff]).toString('base64'); // "/w=="
    expect(oneByte).toBe('/w==');
    const result = { id: 'b', type: 'sign.result', certificateChain: [der], timestampToken: der };
    expect(parsed({ ...result, signedHash: oneByte }).type).toBe('sign.result');
    expect(refusal({ ...result, signedHash: '/x==' }).reason).toContain(
      'signedHash must be padded',
    );
  });

  it('does not read fields from the prototype chain', () => {
    const json = '{"id":"a","type":"hello","__proto__":{"versions":[1]}}';
    expect(refusal(json).reason).toBe('versions must be an array');
  });

  it('refuses messages longer than the limit before parsing them', () => {
    const long = JSON.stringify({
      id: 'a',
      type: 'hello',
      versions: [1],
      pad: 'x'.repeat(AGENT_MAX_MESSAGE_LENGTH),
    });
    expect(refusal(long)).toEqual({
      id: null,
      reason: `message is longer than ${AGENT_MAX_MESSAGE_LENGTH}`,
    });
  });
});

describe('agent protocol: version negotiation', () => {
  it('picks the highest version both sides speak', () => {
    expect(negotiateAgentProtocolVersion([1])).toBe(1);
    expect(negotiateAgentProtocolVersion([3, 1, 2])).toBe(1);
  });

  it('finds none when the page speaks only newer versions', () => {
    expect(negotiateAgentProtocolVersion([2, 3])).toBeNull();
  });
});

describe('agent protocol: pushes, timestamp authority and error messages', () => {
  it('reads tokens.changed', () => {
    const pushed = {
      id: 'evt-1',
      type: 'tokens.changed',
      tokens: [
        {
          label: 'VNPT-CA',
          serialNumber: '0102',
          manufacturer: 'VNPT',
          model: 'ePass2003',
          module: 'VNPT-CA',
        },
      ],
    };
    expect(parsed(pushed)).toEqual(pushed);
  });

  it('reads a sign with the TSA of the initiate answer, and refuses one carrying credentials', () => {
    const withTsa = { ...sign, tsaUrl: 'http://tsa.example.vn/tsa' };
    expect(parsed(withTsa)).toEqual(withTsa);
    expect(refusal({ ...sign, tsaUrl: 'https://user:secret@tsa.example.vn/' }).reason).toBe(
      'tsaUrl must not carry credentials',
    );
    expect(refusal({ ...sign, tsaUrl: 'ftp://tsa.example.vn/' }).reason).toBe(
      'tsaUrl must be http or https',
    );
  });

  it('has a Vietnamese and an English message for every error code', () => {
    for (const code of AGENT_ERROR_CODES) {
      expect(AGENT_ERROR_MESSAGES[code].vi.length).toBeGreaterThan(5);
      expect(AGENT_ERROR_MESSAGES[code].en.length).toBeGreaterThan(5);
    }
    const error = {
      id: 'x',
      type: 'error',
      code: 'PIN_INCORRECT',
      message: 'wrong PIN',
      userMessage: AGENT_ERROR_MESSAGES.PIN_INCORRECT,
      pin: { countLow: true, finalTry: false },
    };
    expect(parsed(error)).toEqual(error);
  });
});
