import { FetchFailure } from '../errors.js';
import { isTransientStatus } from '../fetch/classify-error.js';
import { cookieHeader, type FileCookie } from '../fetch/cookie-file.js';
import type { FetchedResponse } from '../fetch/fetcher.js';
import { defaultRequestHeaders } from '../fetch/request-headers.js';
import { headerValue } from '../fetch/header-value.js';
import { parseRetryAfter } from '../fetch/retry-after.js';
import type { HookCallEnv } from './hook-call.js';
import type { HookModule } from './hooks.js';
import { type AfterStep, type BeforeStep, MiddlewareChain, type Verdict } from './middleware-chain.js';

/**
 * The built-in steps of the fetch middleware (docs/hooks.md): they run first, as the same
 * kind of step as a user's beforeFetch / afterFetch, so a user's step sees what they did
 * (and may change or remove it): the default headers, --header, --cookie-file, the robots gate.
 */

/** The request headers every request starts with: the user agent and what we accept. */
export function defaultHeadersStep(userAgent: string): BeforeStep {
  return {
    name: 'default headers',
    run(request) {
      request.headers = { ...defaultRequestHeaders(userAgent), ...request.headers };
      return undefined;
    },
  };
}

/** --header: each extra header replaces a default of the same name (names are lowercase). */
export function extraHeadersStep(headers: readonly (readonly [string, string])[]): BeforeStep {
  return {
    name: 'headers (--header)',
    run(request) {
      for (const [name, value] of headers) request.headers[name] = value;
      return undefined;
    },
  };
}

/** --cookie-file: the `cookie` header of the cookies that apply to the URL (`now`: wall clock, ms). */
export function cookiesStep(cookies: readonly FileCookie[], now: () => number): BeforeStep {
  return {
    name: 'cookies (--cookie-file)',
    run(request) {
      const cookie = cookieHeader(cookies, new URL(request.url), Math.floor(now() / 1000));
      if (cookie !== undefined) request.headers.cookie = cookie;
      return undefined;
    },
  };
}

/** What the command line adds to every request (--header, --cookie-file). */
export interface RequestControls {
  readonly headers?: readonly (readonly [string, string])[];
  readonly cookies?: readonly FileCookie[];
}

/**
 * The robots.txt gate: a URL robots.txt disallows is never requested (`allowed`: the host's
 * rules). robots.txt itself always may be.
 */
export function robotsStep(allowed: (hostDir: string, url: string) => boolean): BeforeStep {
  return {
    name: 'robots.txt',
    run(request) {
      if (request.kind === 'robots' || allowed(request.host, request.url)) return undefined;
      return { kind: 'skip', failure: new FetchFailure('ROBOTS_DISALLOWED', 'final', 'disallowed by robots.txt') };
    },
  };
}

/**
 * The status decision: a 2xx is accepted; a transient status (docs/errors.md:
 * 408, 425, 429, 5xx) asks for a retry, as long as Retry-After says if it says; any other
 * is a final error. The retry schedule itself is the committer's (nextRetryDelay).
 */
export function statusStep(now: () => number): AfterStep {
  return {
    name: 'status and Retry-After',
    run(_request, _response, raw) {
      return statusVerdict(raw, now());
    },
  };
}

/** What the status of a response means (see statusStep). */
export function statusVerdict(res: FetchedResponse, now: number): Verdict {
  const status = res.status;
  if (status >= 200 && status < 300) return { action: 'accept' };
  const retryAfterMs = parseRetryAfter(headerValue(res.headers, 'retry-after'), now);
  const extra = { status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (isTransientStatus(status)) {
    const failure = new FetchFailure(`HTTP_${status}`, 'transient', `HTTP ${status}`, extra);
    return { action: 'retry', ...(retryAfterMs !== undefined ? { delayMs: retryAfterMs } : {}), reason: `HTTP ${status}`, failure };
  }
  return { action: 'error', reason: `HTTP ${status}`, failure: new FetchFailure(`HTTP_${status}`, 'final', `HTTP ${status}`, extra) };
}

/** The fetch middleware of a node: the built-in steps, then the --hook modules' (docs/hooks.md). */
export function fetchMiddleware(
  userAgent: string,
  robotsAllowed: (hostDir: string, url: string) => boolean,
  now: () => number,
  user?: { readonly hooks: readonly HookModule[]; readonly env: HookCallEnv },
  controls: RequestControls = {},
): MiddlewareChain {
  const before = [defaultHeadersStep(userAgent)];
  if (controls.headers !== undefined && controls.headers.length > 0) before.push(extraHeadersStep(controls.headers));
  if (controls.cookies !== undefined && controls.cookies.length > 0) before.push(cookiesStep(controls.cookies, now));
  return new MiddlewareChain([...before, robotsStep(robotsAllowed)], [statusStep(now)], user);
}
