// The contract between the binding and the facade (src/wire/contract.rs, docs/architecture.md):
// the binding owns the outbox message kinds, the call flags, the error codes and the failure
// messages, and the facade reads them (lib/contract.generated.json, which `cargo test` holds to
// the Rust declarations); a call that fails before dispatch throws its error
// description (the outbox carries every other failure); the provider is an enum parsed at the
// napi boundary; pagination hooks are isolated by the one `callHook` of lib/diagnostics.cjs.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  AniLinkApiError,
  AniLinkAuthError,
  AniLinkErrorCodes,
  AniLinkGraphQLError,
  AniLinkNetworkError,
  AniLinkValidationError,
} from 'anilink-api-wrapper';
import { aniListClient, closedPort, rejectionOf, useTestServer } from './support/helpers';
import type { TestServer } from './support/test-server';

const require = createRequire(import.meta.url);
const native = require('../lib/native.cjs').addon();
const { paginate } = require('../lib/paginate.cjs');

interface OverridableUrl {
  default: string;
  variable: string;
}
interface Contract {
  kinds: Record<'value' | 'nothing' | 'failure' | 'event', number>;
  flags: Record<'cancellable' | 'alreadyAborted', number>;
  errorCodes: { key: string; code: string }[];
  typeErrorCode: string;
  messages: Record<string, string>;
  slot: {
    anilist: { tokenField: string; api: OverridableUrl };
    mal: { tokenField: string; api: OverridableUrl };
    authFields: string[];
    baseUrlField: string;
  };
  urls: Record<'anilistToken' | 'malToken' | 'idMapping', OverridableUrl>;
  slotEnvironment: string[];
  hooks: string[];
  diagnosticHook: string;
}
const contract = require('../lib/contract.generated.json') as Contract;

let server: TestServer;
useTestServer((started) => {
  server = started;
});

/** What a native call threw, or a failure of the test when it threw nothing. */
function thrownBy(start: () => unknown): Record<string, unknown> {
  try {
    start();
  } catch (thrown) {
    return thrown as Record<string, unknown>;
  }
  throw new Error('the call threw nothing');
}

describe('what the binding exports', () => {
  it('AniLinkErrorCodes is the binding list of codes, in its order', () => {
    expect(Object.entries(AniLinkErrorCodes)).toEqual(contract.errorCodes.map(({ key, code }) => [key, code]));
    expect(Object.isFrozen(AniLinkErrorCodes)).toBe(true);
    expect(Object.values(AniLinkErrorCodes)).not.toContain(contract.typeErrorCode);
  });

  it('message kinds are distinct, and call flags are distinct single bits', () => {
    expect(new Set(Object.values(contract.kinds)).size).toBe(4);
    const flags = Object.values(contract.flags);
    expect(flags.every((flag) => flag > 0 && (flag & (flag - 1)) === 0)).toBe(true);
    expect(new Set(flags).size).toBe(flags.length);
  });
});

describe('the facade reads the slot schema, the URLs and the hook names from the contract', () => {
  it("the public URL constants and the credential fields are the contract's", () => {
    const root = require('../lib/index.cjs');
    expect(root.MAL_API_BASE_URL).toBe(contract.slot.mal.api.default);
    expect(root.ANILIST_TOKEN_URL).toBe(contract.urls.anilistToken.default);
    expect(root.MAL_TOKEN_URL).toBe(contract.urls.malToken.default);
    expect(require('../lib/map-external-ids.cjs').ARM_DEFAULT_URL).toBe(contract.urls.idMapping.default);
    const { CREDENTIAL_FIELDS } = require('../lib/external.cjs');
    expect(CREDENTIAL_FIELDS).toEqual(['authToken', 'accessToken', ...contract.slot.authFields]);
    expect(contract.slot.authFields).toEqual([
      'refreshToken',
      'clientId',
      'clientSecret',
      'onTokenRefresh',
      'onTokenRefreshError',
    ]);
  });

  it('every environment variable a slot reads is named, the endpoint overrides first', () => {
    const { slot, slotEnvironment } = contract;
    expect(slotEnvironment.slice(0, 2)).toEqual([slot.anilist.api.variable, slot.mal.api.variable]);
    expect(slotEnvironment).toContain('ANILINK_IO_THREAD');
    expect(new Set(slotEnvironment).size).toBe(slotEnvironment.length);
  });

  it('an unknown slot key names the fields of the schema', () => {
    expect(() => native.NativeClient.create('mal', { accesToken: 'x' }, NO_ENVIRONMENT, () => {})).toThrow(
      `Provider auth fields are: ${contract.slot.mal.tokenField}, ${contract.slot.authFields.join(', ')}. Endpoint option: ${contract.slot.baseUrlField}.`,
    );
  });

  it('the hooks are the transport option keys that take a hook, and the diagnostic pseudo-hook is none of them', () => {
    expect(contract.hooks).toEqual([
      'onRequestStart',
      'onResponse',
      'onError',
      'onRetry',
      'onPace',
      'onCircuitOpen',
      'onCircuitClose',
    ]);
    const optionKeys: string[] = native.transportOptionKeys();
    expect(contract.hooks.every((hook) => optionKeys.includes(hook))).toBe(true);
    expect(optionKeys).not.toContain(contract.diagnosticHook);
  });
});

describe('failure messages are written once, in Rust', () => {
  it("templates are filled by the transport's one rule: every placeholder once, unknown ones kept", () => {
    expect(native.fillMessage('{a}-{b}-{a} {c} {', { a: '1', b: '2' })).toBe('1-2-1 {c} {');
    expect(native.fillMessage('{a}', { a: '{b}', b: 'no' })).toBe('{b}');
  });

  it('an error a caller builds says what the transport says for the same failure', async () => {
    server.enqueue({ status: 503, body: 'down' });
    const http = await rejectionOf<AniLinkApiError>(
      aniListClient(server, { retry: false }).anilist.query.media({ id: 1 }),
    );
    expect(new AniLinkApiError(503, null).message).toBe(http.message);

    const auth = await rejectionOf(aniListClient(server).anilist.query.viewer());
    const operation = /\(operation: (.+)\)$/.exec(auth.message)?.[1];
    expect(operation).toBeDefined();
    expect(new AniLinkAuthError(operation).message).toBe(auth.message);
    expect(new AniLinkAuthError().message).toBe(contract.messages.auth);

    const invalid = await rejectionOf<AniLinkValidationError>(
      aniListClient(server).anilist.query.media({ id: 'one' } as never),
    );
    expect(new AniLinkValidationError(invalid.details).message).toBe(invalid.message);

    const errors = [{ message: 'Not Found.', status: 404 }, { status: 400 }];
    server.enqueue({ body: { data: null, errors } });
    const graphql = await rejectionOf<AniLinkGraphQLError>(aniListClient(server).anilist.query.media({ id: 1 }));
    expect(new AniLinkGraphQLError(errors).message).toBe(graphql.message);

    const network = await rejectionOf(
      aniListClient({ url: `http://127.0.0.1:${await closedPort()}` }, { retry: false }).anilist.query.media({ id: 1 }),
    );
    expect(new AniLinkNetworkError(AniLinkErrorCodes.NETWORK).message).toBe(network.message);
  });
});

/** A slot built with no environment variables set, on Node (decisions D38). */
const NO_ENVIRONMENT = { variables: {}, libuv: true };

describe('one path for failures before dispatch', () => {
  const client = () => native.NativeClient.create('anilist', { baseUrl: server.url }, NO_ENVIRONMENT, () => {});

  it('invalid variables are thrown as their error description, nothing is sent', () => {
    // Arguments arrive as JSON text written by the facade (lib/json-text.cjs).
    const description = thrownBy(() =>
      native.startOperation(client().id, 'query.media', '{"id":"one"}', undefined, undefined, undefined, 1, 0),
    );
    expect(description).toMatchObject({ code: AniLinkErrorCodes.VALIDATION, details: [expect.stringContaining('id')] });
    expect(server.requests).toHaveLength(0);
  });

  it('calls are started by client id; an id no live client has is a clear error', () => {
    const first = client();
    expect(typeof first.id).toBe('number');
    expect(client().id).not.toBe(first.id);
    expect(() => native.startCustom(2 ** 31, '{ Viewer { id } }', undefined, undefined, undefined, 1, 0)).toThrow(
      /no client has the id 2147483648/,
    );
  });

  it('an invalid per-request option is thrown as a TYPE_ERROR description', () => {
    const description = thrownBy(() =>
      native.startOperation(client().id, 'query.media', '{"id":1}', undefined, undefined, { timeout: -1 }, 1, 0),
    );
    expect(description).toMatchObject({ code: contract.typeErrorCode, message: expect.stringContaining('timeout') });
    expect(server.requests).toHaveLength(0);
  });
});

describe('hook presence is decided natively, from the resolved options', () => {
  it('a per-request undefined hook silences the client one; a per-request hook alone gets events', async () => {
    const fromClient: string[] = [];
    const aniLink = aniListClient(server, { onResponse: () => fromClient.push('client') });
    server.enqueue({ body: { data: { Media: { id: 1 } } } });
    await aniLink.anilist.query.media({ id: 1 }, { onResponse: undefined });
    expect(fromClient).toEqual([]);

    const fromRequest: number[] = [];
    const plain = aniListClient(server);
    server.enqueue({ body: { data: { Media: { id: 1 } } } });
    await plain.anilist.query.media(
      { id: 1 },
      { onResponse: (ctx: { attempt: number }) => fromRequest.push(ctx.attempt) },
    );
    expect(fromRequest).toEqual([1]);
  });
});

describe('the provider is an enum', () => {
  it('accepts anilist, mal and external, and refuses any other name (the old hidden "token" included)', () => {
    for (const provider of ['anilist', 'mal', 'external']) {
      expect(native.NativeClient.create(provider, {}, NO_ENVIRONMENT, () => {})).toBeInstanceOf(native.NativeClient);
    }
    for (const provider of ['token', 'AniList', '']) {
      expect(() => native.NativeClient.create(provider, {}, NO_ENVIRONMENT, () => {})).toThrow();
    }
  });

  it('an external client takes no credentials and has no catalog', () => {
    expect(() =>
      native.NativeClient.create('external', { accessToken: 'secret-value' }, NO_ENVIRONMENT, () => {}),
    ).toThrow(/Unknown option key "accessToken" for an external client/);
    const external = native.NativeClient.create('external', {}, NO_ENVIRONMENT, () => {});
    expect(() =>
      native.startOperation(external.id, 'query.media', '{"id":1}', undefined, undefined, undefined, 1, 0),
    ).toThrow(/no catalog operations/);
  });
});

describe('pagination hooks are isolated like every other hook', () => {
  it('an onHookError that rejects is swallowed, never an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const observed: string[] = [];
      const result = await paginate(async () => ({ pageInfo: { hasNextPage: false }, media: [1] }), 'media', {
        onPage: () => {
          throw new Error('metrics down');
        },
        onHookError: async (hookName: string, error: Error) => {
          observed.push(`${hookName}: ${error.message}`);
          throw new Error('the observer failed too');
        },
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(result.items).toEqual([1]);
      expect(observed).toEqual(['onPage: The onPage hook threw and was ignored: metrics down']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
