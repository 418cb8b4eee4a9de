import { FetchFailure, describeError } from '../errors.js';

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);

/**
 * Turns whatever an HTTP request threw into a FetchFailure with a stable code (docs/errors.md)
 * and says whether trying again later can help. `timedOut` is true when our own total
 * deadline aborted the request.
 */
export function classifyFetchError(err: unknown, timedOut: boolean): FetchFailure {
  if (err instanceof FetchFailure) return err;
  const message = describeError(err);
  if (timedOut) return new FetchFailure('FETCH_TIMEOUT', 'transient', 'total deadline passed', { cause: err });
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  const code = e?.code ?? e?.cause?.code ?? '';
  const t = (c: string): FetchFailure => new FetchFailure(c, 'transient', message, { cause: err });
  const f = (c: string): FetchFailure => new FetchFailure(c, 'final', message, { cause: err });
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return t('CONNECT_TIMEOUT');
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return t('FETCH_TIMEOUT');
    case 'ECONNREFUSED':
      return t('CONNECTION_REFUSED');
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return t('CONNECTION_RESET');
    // The resolver's answer that the name does not exist (Node reports EAI_NONAME and
    // EAI_NODATA as ENOTFOUND): a mistyped host name fails at once instead of after every
    // retry. A resolver that could not answer (EAI_AGAIN, EAI_FAIL) may answer later.
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'EAI_NODATA':
      return f('DNS_NO_SUCH_HOST');
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return t('DNS_FAILED');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
      return t('HOST_UNREACHABLE');
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return t('BAD_RESPONSE');
    case 'EPRIVATE':
      return f('PRIVATE_ADDRESS');
    case 'Z_DATA_ERROR':
    case 'Z_BUF_ERROR':
    case 'ERR__ERROR_FORMAT_PADDING_1':
    case 'ERR_BROTLI_DECOMPRESSION_FAILED':
      return f('DECODE_FAILED');
    default:
      break;
  }
  if (TLS_CODES.has(code) || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) return f('TLS_ERROR');
  if (code.startsWith('HPE_') || code === 'UND_ERR_INFO') return t('BAD_RESPONSE');
  return t('FETCH_FAILED');
}

/**
 * The one rule for HTTP statuses, pages and robots.txt alike: 408, 425, 429 and every 5xx
 * are transient (trying again later may help); any other failure status is final.
 */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || (status >= 500 && status < 600);
}
