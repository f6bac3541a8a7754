import {
  type CallResult,
  createSvcClient,
  type PagedItem,
  type PagedPath,
  type PagedQuery,
  type SvcClient,
  SvcError,
  unwrap,
} from '#sdk';
import { configPath, DEFAULT_BASE_URL, readConfig } from './configStore.ts';
import { CliError, EXIT } from './exitCodes.ts';

// The CLI's one door to the API: the SDK client made from the environment or `svc login`'s
// config, and the translation of its failures into the CLI's messages and exit codes.

export interface Session {
  readonly svc: SvcClient;
  readonly baseUrl: string;
  /** The data of a call, or a CliError that explains the failure. */
  call<R extends CallResult>(request: Promise<R>): ReturnType<typeof unwrap<R>>;
  /** Every item of a paged list (following Link rel="next"), failures translated. */
  paginate<P extends PagedPath>(path: P, query?: PagedQuery<P>): AsyncGenerator<PagedItem<P>>;
}

/** SVC_BASE_URL, else the base URL `svc login` saved, else the local default. */
export function baseUrlOf(flag?: string): string {
  const chosen = flag ?? process.env.SVC_BASE_URL ?? readConfig().baseUrl ?? DEFAULT_BASE_URL;
  if (!URL.canParse(chosen) || !/^https?:$/.test(new URL(chosen).protocol)) {
    throw new CliError(`not an http(s) URL: ${chosen}`, EXIT.usage);
  }
  return chosen.replace(/\/+$/, '');
}

/** A session with the API key of SVC_API_KEY or `svc login`; not signed in is exit 3. */
export function signedIn(): Session {
  const apiKey = process.env.SVC_API_KEY ?? readConfig().apiKey;
  if (!apiKey) {
    throw new CliError('not signed in: run `svc login` (or set SVC_API_KEY)', EXIT.notSignedIn);
  }
  return session(baseUrlOf(), apiKey);
}

/** A session for the one public endpoint (POST /v1/projects), or with a key not yet saved. */
export function session(baseUrl: string, apiKey?: string): Session {
  const svc = createSvcClient({ baseUrl, ...(apiKey !== undefined && { apiKey }) });
  const call = async <R extends CallResult>(request: Promise<R>) => {
    try {
      return await unwrap(request);
    } catch (error) {
      if (error instanceof SvcError) throw cliErrorOf(error);
      throw unreachable(baseUrl, error);
    }
  };
  return {
    svc,
    baseUrl,
    call,
    async *paginate<P extends PagedPath>(path: P, query?: PagedQuery<P>) {
      const pages = svc.paginate(path, query === undefined ? {} : { query });
      try {
        yield* pages;
      } catch (error) {
        if (error instanceof SvcError) throw cliErrorOf(error);
        throw unreachable(baseUrl, error);
      }
    },
  };
}

function unreachable(baseUrl: string, error: unknown): CliError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (error as Error).message;
  return new CliError(`cannot reach svc at ${baseUrl}: ${why}`, EXIT.failed);
}

/** An error answer as one line (the API's own words), its field errors, and the request id. */
export function cliErrorOf(error: SvcError): CliError {
  const problem = error.problem;
  const details = [
    ...(problem?.errors ?? [])
      .filter((field) => field.message !== problem?.detail)
      .map((field) => `  ${field.field}: ${field.message}`),
    ...(error.requestId ? [`  request id: ${error.requestId}`] : []),
  ];
  if (error.status === 401) {
    const source = process.env.SVC_API_KEY ? 'SVC_API_KEY' : `the key saved in ${configPath()}`;
    return new CliError(`the API key was refused (401): check ${source}, or run \`svc login\``, EXIT.notSignedIn, {
      details,
      problem,
    });
  }
  const what = problem ? `${problem.detail} (${problem.code}, HTTP ${error.status})` : `HTTP ${error.status}`;
  return new CliError(what, EXIT.failed, { details, problem });
}
