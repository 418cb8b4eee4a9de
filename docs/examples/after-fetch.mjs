// afterFetch: accept, retry, drop, or make a page an error (docs/hooks.md).
// mountcrawl crawl https://example.com/ --hook docs/examples/after-fetch.mjs
export function afterFetch(request, response) {
  // response.verdict is what the built-in status step decided ({ action: 'accept' } for a 2xx).
  const text = response.text ?? '';
  if (text.includes('Access denied')) return { action: 'error', reason: 'block page served with 200' };
  if (text.includes('Please try again')) return { action: 'retry', delayMs: 100, reason: 'busy page' };
  if (request.url.includes('/print/')) return { action: 'drop', reason: 'print version' };
  return response.verdict;
}
