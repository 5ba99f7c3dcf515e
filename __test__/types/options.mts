// Wrongly typed options must not compile (npm run test:types fails if any of these does).
import { AniLink, AniLinkApiError, AniLinkError, AniLinkErrorCodes, type RequestErrorContext } from "anilink-api-wrapper";
import { AniLink as AniListEntry } from "anilink-api-wrapper/anilist";
import { AniLink as MalEntry } from "anilink-api-wrapper/mal";

// @ts-expect-error retry is a boolean or a policy object
new AniLink("token", { retry: "yes" });
// @ts-expect-error unknown option key
new AniLink("token", { retries: 3 });
// @ts-expect-error maxRetries is a number
new AniLink("token", { retry: { maxRetries: "3" } });
// @ts-expect-error diagnostics is one of warn | hook | silent
new AniLink("token", { diagnostics: "loud" });
// @ts-expect-error a credentials object takes no second argument
new AniLink({ anilist: { authToken: "t" } }, { retry: false });
// @ts-expect-error unknown slot key
new AniLink({ anilist: { token: "t" } });
// @ts-expect-error the MAL slot's token field is accessToken
new AniLink({ mal: { authToken: "t" } });
// @ts-expect-error circuitBreaker needs both fields
new AniLink("token", { circuitBreaker: { threshold: 5 } });

const client = new AniLink({
  anilist: {
    authToken: "t",
    onRetry: (error: AniLinkError, context: RequestErrorContext) => {
      const delay: number | undefined = context.nextDelayMs;
      void [error.code, delay];
    },
  },
  mal: { clientId: "cid", maxSockets: 4 },
});

export async function calls(): Promise<void> {
  const controller = new AbortController();
  await client.anilist.query.media({ id: 1 }, { signal: controller.signal, timeout: 1000 });
  // @ts-expect-error per-request options are typed too
  await client.anilist.query.media({ id: 1 }, { timeout: "1s" });
  await client.mal.anime.get({ id: 1 }, { fields: ["id", "title"] });
  try {
    await client.anilist.custom<{ id: number }>("query { Media(id: 1) { id } }");
  } catch (error) {
    if (error instanceof AniLinkApiError) {
      const status: number = error.status;
      void status;
    }
    if (error instanceof AniLinkError && error.code === AniLinkErrorCodes.TIMEOUT) {
      void error.requestId;
    }
  }
}

// Every entry hands out the same class.
export const sameClass: typeof AniLink = AniListEntry;
export const sameClassMal: typeof AniLink = MalEntry;
