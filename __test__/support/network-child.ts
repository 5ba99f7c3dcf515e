/**
 * AniList calls from a fresh Node process, for behaviour that depends on the environment a
 * client reads when a slot is built (decisions D38): the proxy variables and what TLS trusts.
 * The child drops every such variable it inherited, sets `env` inside the program, then builds
 * its clients.
 */
import { resultOf, runModule } from './child';

export interface CallOutcome {
  ok: boolean;
  value?: unknown;
  name?: string;
  code?: string;
  reason?: string;
  message?: string;
}

export interface NetworkChildRun {
  /** One per client, in order. */
  outcomes: CallOutcome[];
  code: number | null;
}

/**
 * One `anilist.query.media({ id: 1 })` call from a client on `baseUrl` with `slot` options.
 * With `laterProxy`, a second client is built after `HTTP_PROXY` is set to it, and calls too.
 */
export async function callInChild(
  env: Record<string, string>,
  baseUrl: string,
  slot: Record<string, unknown> = {},
  laterProxy?: string,
): Promise<NetworkChildRun> {
  const source = `
    for (const key of Object.keys(process.env)) {
      if (/^(https?_proxy|all_proxy|no_proxy|node_extra_ca_certs|ssl_cert_file|ssl_cert_dir|node_tls_reject_unauthorized)$/i.test(key)) delete process.env[key];
    }
    Object.assign(process.env, ${JSON.stringify(env)});
    const { AniLink } = await import('anilink-api-wrapper');
    const client = () => new AniLink({ anilist: { baseUrl: ${JSON.stringify(baseUrl)}, retry: false, ...${JSON.stringify(slot)} } });
    const clients = [client()];
    const laterProxy = ${JSON.stringify(laterProxy ?? null)};
    if (laterProxy) {
      process.env.HTTP_PROXY = laterProxy;
      clients.push(client());
    }
    const outcomes = [];
    for (const aniLink of clients) {
      try {
        outcomes.push({ ok: true, value: await aniLink.anilist.query.media({ id: 1 }) });
      } catch (error) {
        outcomes.push({ ok: false, name: error.name, code: error.code, reason: error.reason, message: error.message });
      }
    }
    console.log('RESULT ' + JSON.stringify(outcomes));
  `;
  const run = await runModule(source, 15_000);
  return { outcomes: resultOf<CallOutcome[]>(run), code: run.code };
}
