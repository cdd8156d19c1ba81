import type { AgentInfo, SignRequest, TokenSummary } from '@esign/shared';
import { AGENT_PORTS } from '@esign/shared';
import { type AgentServer, type AgentServerLimits, startAgentServer } from './agentServer';
import { ChainBuilder } from './chain';
import { AgentFailure } from './errors';
import { OriginApprovals } from './originApprovals';
import { TokenRegistry } from './pkcs11/tokenRegistry';
import type { SignTicketCheck, UserPrompts } from './prompts';
import { AGENT_PRODUCT_NAME, type AgentSettings } from './settings';
import { SigningTickets } from './signingTickets';
import { SpentTickets } from './spentTickets';
import { requestTimestamp } from './timestamp';
import { signatureImprint, TokenSigner } from './tokenSigner';

export interface AgentCoreOptions {
  /** The settings as loaded; approvals change `allowedOrigins` in place and call `save`. */
  settings: AgentSettings;
  /** Persists the settings after an approval or revocation. */
  save(settings: AgentSettings): Promise<void>;
  prompts: UserPrompts;
  /** The signing-ticket check; default: SigningTickets over the settings' servers and pins. */
  ticketCheck?: SignTicketCheck;
  /**
   * The file of spent signing-ticket nonces (`spentTicketsFile` beside the settings), loaded at
   * start; without it they are kept in memory and a restart forgets them.
   */
  spentTicketsFile?: string;
  /** Folders of intermediate CA certificates: bundled, then the user's. */
  intermediateFolders: readonly string[];
  version: string;
  /** Ports to try; default the settings' port, then the protocol's fallbacks. */
  ports?: readonly number[];
  limits?: AgentServerLimits;
  now?(): Date;
  log?(message: string): void;
}

export interface AgentCore {
  port: number;
  registry: TokenRegistry;
  approvals: OriginApprovals;
  close(): Promise<void>;
}

function portsFor(settings: AgentSettings): number[] {
  return [settings.port, ...AGENT_PORTS.filter((port) => port !== settings.port)];
}

/**
 * The agent without its windows: tokens, signing, timestamps and the local server, with the
 * user's answers injected. The Electron shell and the headless mode both start this.
 */
export async function startAgentCore(options: AgentCoreOptions): Promise<AgentCore> {
  const { settings } = options;
  const now = options.now ?? (() => new Date());
  const registry = new TokenRegistry({
    modules: () => settings.pkcs11Modules.filter((module) => module.enabled),
    pollIntervalMs: settings.tokenPollIntervalMs,
    ...(options.log ? { log: options.log } : {}),
  });
  await registry.start();
  const signer = new TokenSigner(registry, {
    // Every enabled entry with the token's module label counts (two entries may name one file).
    avoidedMechanisms: (moduleLabel) =>
      settings.pkcs11Modules
        .filter((module) => module.enabled && module.label === moduleLabel)
        .flatMap((module) => module.avoidMechanisms),
    ...(options.log ? { log: options.log } : {}),
  });
  const chains = new ChainBuilder({
    folders: options.intermediateFolders,
    fetchIssuers: settings.fetchIssuers,
    ...(options.log ? { log: options.log } : {}),
  });
  const approvals = new OriginApprovals({
    allowed: () => settings.allowedOrigins,
    remember: async (origin) => {
      if (!settings.allowedOrigins.includes(origin)) settings.allowedOrigins.push(origin);
      await options.save(settings);
    },
    forget: async (origin) => {
      settings.allowedOrigins = settings.allowedOrigins.filter((entry) => entry !== origin);
      await options.save(settings);
    },
    ask: (origin) => options.prompts.approveOrigin(origin),
  });

  const tokens = (): TokenSummary[] =>
    registry.tokens().map((token) => ({
      label: token.label.slice(0, 64),
      serialNumber: token.serialNumber.slice(0, 64),
      manufacturer: token.manufacturer.slice(0, 64),
      model: token.model.slice(0, 64),
      module: token.module.slice(0, 200),
    }));

  const ticketCheck =
    options.ticketCheck ??
    new SigningTickets({
      servers: () => settings.ticketServers,
      required: () => settings.requireTicket,
      pinned: (server) => settings.pinnedTicketKeys[server],
      pin: async (server, keys) => {
        settings.pinnedTicketKeys[server] = keys;
        await options.save(settings);
      },
      now,
      spent: options.spentTicketsFile
        ? await SpentTickets.load(options.spentTicketsFile, now().getTime(), options.log)
        : SpentTickets.inMemory(),
    });

  const sign = async (request: SignRequest, origin: string) => {
    // Everything that needs neither token nor user first.
    const ticket = await ticketCheck.check(request, origin);
    let produced: Awaited<ReturnType<TokenSigner['sign']>>;
    let tsaUrl: string | null;
    try {
      tsaUrl = request.tsaUrl ?? ticket?.tsaUrl ?? settings.tsaUrl;
      if (!tsaUrl) {
        throw new AgentFailure(
          'TIMESTAMP_FAILED',
          'no timestamp authority: none in the request, its ticket or the settings',
        );
      }
      produced = await signer.sign({
        certificateId: request.certificateId,
        documentDigest: Buffer.from(request.documentDigest, 'base64'),
        origin,
        serviceName: request.requester.serviceName,
        documentTitle: request.documentTitle,
        prompts: options.prompts,
        now: now(),
      });
    } catch (error) {
      ticket?.release();
      throw error;
    }
    const [chain, timestampToken] = await Promise.all([
      chains.build(produced.signer, produced.tokenCertificates),
      requestTimestamp(tsaUrl, signatureImprint(produced.signature)),
    ]);
    return {
      signedHash: produced.signature.toString('base64'),
      certificateChain: chain.slice(0, 10).map((der) => der.toString('base64')),
      timestampToken: timestampToken.toString('base64'),
    };
  };

  const agent: AgentInfo = {
    name: AGENT_PRODUCT_NAME,
    version: options.version,
    platform: process.platform,
  };
  let server: AgentServer;
  try {
    server = await startAgentServer({
      ports: options.ports ?? portsFor(settings),
      agent,
      approvals,
      handlers: {
        listCertificates: async () => {
          const certificates = await signer.listCertificates(now());
          if (certificates.length === 0 && registry.tokens().length === 0) {
            throw new AgentFailure('NO_TOKEN', 'no token is plugged in');
          }
          return certificates;
        },
        sign,
        tokens,
        onTokensChanged: (listener) => registry.onChange(() => listener()),
      },
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  } catch (error) {
    await registry.close();
    throw error;
  }
  return {
    port: server.port,
    registry,
    approvals,
    close: async () => {
      await server.close();
      await registry.close();
    },
  };
}
