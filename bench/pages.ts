/**
 * The benchmark site's pages: deterministic, dense, real-world markup (about 30 KB and 700
 * elements a page) with about 40 links each in the spellings real sites use. Generated once,
 * before any crawler runs, and served from memory (bench/site.ts), so the site costs little
 * CPU while the crawlers run.
 */

import { rng } from '../src/site/generated-site.js';

export { rng };

/** One host as the page generator sees it. */
export interface PageHost {
  readonly index: number;
  /** `http://127.0.0.10:34567` */
  readonly origin: string;
  /** `127.0.0.10:34567` */
  readonly authority: string;
}

/** Paths that robots.txt disallows on every host; every page links into them. */
export const DISALLOWED_PREFIXES: readonly string[] = Object.freeze(['/private/', '/cart/']);

/** The robots.txt every host serves. */
export const ROBOTS_TXT = `# bench site\nUser-agent: *\n${DISALLOWED_PREFIXES.map((p) => `Disallow: ${p}\n`).join('')}\n`;

/** Every page links to the 4 pages after it in this tree (page i: 4i+1 .. 4i+4), so depth <= log4(pages). */
const TREE_FANOUT = 4;

/** Page sections: a page's directory decides how its relative links are spelled. */
const SECTIONS = ['/blog/', '/blog/2024/', '/docs/guide/', '/docs/api/v2/', '/products/', '/news/2023/11/', '/about/team/'];

const WORDS = (
  'alpha bravo cedar delta ember fjord grove harbor indigo juniper kelp lumen maple nectar ' +
  'onyx pepper quartz raven sierra timber umber velvet willow xenon yarrow zephyr anchor ' +
  'beacon canyon dune estuary falcon glacier heron island jasper kestrel lagoon meadow ' +
  'nimbus orchard prairie quarry ridge summit tundra upland valley wharf'
).split(' ');

/** Path of page `i` of a host (page 0 is `/`). Deterministic: the same i gives the same path on every host. */
export function pagePath(i: number): string {
  if (i === 0) return '/';
  const r = rng(0x5eed + i * 7919);
  const section = SECTIONS[i % SECTIONS.length]!;
  const slug = `${WORDS[Math.floor(r() * WORDS.length)]}-${WORDS[Math.floor(r() * WORDS.length)]}-${i}`;
  // Product pages are directory-style (`/products/slug-12/`), as many real sites do it.
  return section === '/products/' ? `${section}${slug}/` : `${section}${slug}.html`;
}

function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/') + 1);
}

/** `target` relative to a page in directory `fromDir` (both absolute paths): `../api/v2/x.html`, `y.html`, `./`. */
export function relativeHref(fromDir: string, target: string): string {
  const from = fromDir.split('/').slice(1, -1);
  const tDir = dirOf(target);
  const to = tDir.split('/').slice(1, -1);
  let k = 0;
  while (k < from.length && k < to.length && from[k] === to[k]) k++;
  const rel =
    '../'.repeat(from.length - k) +
    to
      .slice(k)
      .map((s) => `${s}/`)
      .join('') +
    target.slice(tDir.length);
  return rel === '' ? './' : rel;
}

/** The pages page `i` links to on its own host that guarantee every page is reachable: its tree children. */
export function treeChildren(i: number, pages: number): number[] {
  const out: number[] = [];
  for (let c = i * TREE_FANOUT + 1; c <= i * TREE_FANOUT + TREE_FANOUT && c < pages; c++) out.push(c);
  return out;
}

/** What one generated page links to, for tests and for the site's bookkeeping. */
export interface GeneratedPage {
  readonly path: string;
  readonly body: Buffer;
  /** Same-host page indexes linked (with duplicates as they appear). */
  readonly sameHost: readonly number[];
  /** Other hosts' pages linked: [host index, page index]. */
  readonly crossHost: readonly (readonly [number, number])[];
  /** `<a href>` elements on the page. */
  readonly anchors: number;
}

/** Site-wide parameters the generator needs. */
export interface SiteShape {
  readonly hosts: readonly PageHost[];
  readonly pagesPerHost: number;
  /** Origins outside the site (trap hosts) that pages link to and that must never be fetched. */
  readonly external: readonly string[];
  /** One page shape for every page, or `mixed` (pageShapeOf); default `standard`. */
  readonly pages?: PageShape | 'mixed';
}

/**
 * Page shapes (issue 13: the result must not depend on one shape):
 * - `standard`: about 30 KB, 40 links (the shape of the first benchmark);
 * - `small`: about 5 KB, 15 links;
 * - `many-links`: about 45 KB, 300 links (a sitemap-like list after the article);
 * - `scripts`: about 140 KB, 40 links, of which 110 KB inline script and style;
 * - `large`: about 150 KB of markup, 90 links;
 * - `near-max`: a standard page with a trailing inline JSON state that makes it 150 to
 *   170 KB, around the `--max-bytes 160k` the bench gives mountcrawl (some are cut short;
 *   every link comes before the cut).
 */
export const PAGE_SHAPES = ['standard', 'small', 'many-links', 'scripts', 'large', 'near-max'] as const;
export type PageShape = (typeof PAGE_SHAPES)[number];

/** The --max-bytes the bench gives mountcrawl: `near-max` pages are around it. */
export const BENCH_MAX_BYTES = 160 * 1024;

/**
 * The shape of page `i` in a mixed site, by i mod 20: 55% standard, 20% small, 10% many-links,
 * 5% each scripts, large and near-max (44 KB a page on average). The home page is standard.
 */
export function pageShapeOf(site: SiteShape, i: number): PageShape {
  const mode = site.pages ?? 'standard';
  if (mode !== 'mixed') return mode;
  const m = i % 20;
  if (i === 0 || m <= 10) return 'standard';
  if (m <= 14) return 'small';
  if (m <= 16) return 'many-links';
  return m === 17 ? 'scripts' : m === 18 ? 'large' : 'near-max';
}

/** How much of each part a page of a shape has: [lo, hi] ranges, counts, KB. */
interface Dims {
  readonly nav: number;
  readonly styleRules: number;
  readonly related: readonly [number, number];
  readonly paragraphs: readonly [number, number];
  readonly rows: readonly [number, number];
  readonly cards: number;
  readonly comments: readonly [number, number];
  readonly footer: boolean;
  readonly sitemap: number;
  readonly scriptKb: number;
  readonly styleKb: number;
  /** Trailing inline JSON: the page's total size is drawn from this range, KB. */
  readonly padToKb: readonly [number, number] | undefined;
}

const STANDARD: Dims = {
  nav: 7,
  styleRules: 14,
  related: [10, 13],
  paragraphs: [10, 16],
  rows: [16, 26],
  cards: 3,
  comments: [6, 10],
  footer: true,
  sitemap: 0,
  scriptKb: 0,
  styleKb: 0,
  padToKb: undefined,
};
const DIMS: Readonly<Record<PageShape, Dims>> = {
  standard: STANDARD,
  small: {
    ...STANDARD,
    nav: 0,
    styleRules: 0,
    related: [1, 2],
    paragraphs: [1, 2],
    rows: [0, 0],
    cards: 1,
    comments: [0, 0],
    footer: false,
  },
  'many-links': { ...STANDARD, sitemap: 250 },
  scripts: { ...STANDARD, scriptKb: 80, styleKb: 30 },
  large: { ...STANDARD, related: [40, 50], paragraphs: [90, 110], rows: [120, 160], comments: [40, 50] },
  'near-max': { ...STANDARD, padToKb: [150, 170] },
};

/**
 * Builds page `i` of host `h`. Links (about 40): a header navigation and a footer that repeat
 * the same few pages (so every page has duplicate links), a breadcrumb, the page's tree
 * children, related pages of the host, pages of other hosts of the site, external sites, the
 * disallowed paths, and mailto:/javascript:/tel:/#fragment links. Same-host links use every
 * spelling: root-relative, relative (`../`, `./`, bare), absolute, protocol-relative, upper
 * case scheme, with #fragments.
 */
export function generatePage(shape: SiteShape, h: number, i: number): GeneratedPage {
  const d = DIMS[pageShapeOf(shape, i)];
  const host = shape.hosts[h]!;
  const pages = shape.pagesPerHost;
  const r = rng(h * 1_000_003 + i * 31 + 17);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
  const words = (n: number): string => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const title = (n: number): string => {
    const w = words(n);
    return w.charAt(0).toUpperCase() + w.slice(1);
  };
  const path = pagePath(i);
  const dir = dirOf(path);
  const sameHost: number[] = [];
  const crossHost: [number, number][] = [];
  let anchors = 0;

  /** A same-host link to page `t` in spelling `style` (0..7, default: random). */
  const href = (t: number, style = int(0, 7)): string => {
    sameHost.push(t);
    const p = pagePath(t);
    switch (style) {
      case 0:
      case 1:
        return p;
      case 2:
        return relativeHref(dir, p);
      case 3:
        return dirOf(p) === dir && !p.endsWith('/') ? `./${relativeHref(dir, p)}` : relativeHref(dir, p);
      case 4:
        return `${host.origin}${p}`;
      case 5:
        return `//${host.authority}${p}`;
      case 6:
        return `${p}#${pick(['comments', 'top', 'section-2', 'reviews'])}`;
      default:
        return `HTTP://${host.authority}${p}`;
    }
  };
  const a = (link: string, text: string, cls?: string): string => {
    anchors++;
    return cls === undefined ? `<a href="${link}">${text}</a>` : `<a class="${cls}" href="${link}">${text}</a>`;
  };
  const icon = (name: string): string =>
    `<svg class="icon icon-${name}" viewBox="0 0 24 24" aria-hidden="true"><path d="M${int(1, 9)} ${int(1, 9)}h${int(4, 12)}v${int(4, 12)}H${int(1, 9)}z"/><path d="M${int(2, 20)} ${int(2, 20)}l${int(2, 6)} ${int(2, 6)}"/></svg>`;

  const out: string[] = [];
  const push = (s: string): void => void out.push(s);
  const pageTitle = title(int(3, 6));
  push(`<!DOCTYPE html>\n<html lang="en" class="no-js">\n<head>\n<meta charset="utf-8">\n`);
  push(`<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${pageTitle} | Host ${h}</title>\n`);
  push(`<meta name="description" content="${words(18)}">\n<meta property="og:title" content="${pageTitle}">\n`);
  push(`<meta property="og:url" content="${host.origin}${path}">\n<link rel="canonical" href="${host.origin}${path}">\n`);
  push(`<link rel="stylesheet" href="/static/css/site.css?v=${int(10, 99)}">\n<link rel="icon" href="/static/favicon.ico">\n`);
  push(`<link rel="preload" as="font" href="/static/fonts/inter.woff2" type="font/woff2" crossorigin>\n`);
  push('<style>\n');
  for (let k = 0; k < d.styleRules; k++) {
    push(
      `.c-${pick(WORDS)}-${k}{margin:${int(0, 24)}px ${int(0, 24)}px;padding:${int(0, 16)}px;color:#${int(0x100000, 0xffffff).toString(16)};font-size:${int(12, 22)}px}\n`,
    );
  }
  if (d.styleKb > 0) push(bulkStyle(d.styleKb * 1024, r));
  push('</style>\n<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag("js",new Date());');
  push(`gtag("config","G-${int(100000, 999999)}",{"page_path":"${path}","anonymize_ip":true});</script>\n`);
  push(
    `<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article","headline":"${pageTitle}","author":{"@type":"Person","name":"${title(2)}"},"datePublished":"2024-0${int(1, 9)}-1${int(0, 9)}"}</script>\n`,
  );
  push(`</head>\n<body class="page page-${i} ${dir.split('/')[1] || 'home'}">\n<div id="app" class="app-shell">\n`);

  // Header navigation: the same pages, spelled root-relative, on every page.
  push(`<header class="site-header"><div class="container"><div class="row align-items-center">\n`);
  push(`<div class="col-auto">${a('/', `<img src="/static/img/logo.svg" alt="Host ${h}" width="120" height="32">`, 'logo')}</div>\n`);
  push(`<nav class="col main-nav" aria-label="Main"><ul class="nav-list">\n`);
  for (let k = 1; k <= d.nav && k < pages; k++) {
    sameHost.push(k);
    push(`<li class="nav-item"><span class="nav-icon">${icon('nav')}</span>${a(pagePath(k), title(1), 'nav-link')}</li>\n`);
  }
  push(
    `</ul></nav>\n<form class="col-auto search" action="/search" method="get" role="search"><label class="visually-hidden" for="q">Search</label>`,
  );
  push(
    `<input id="q" type="search" name="q" placeholder="Search"><button type="submit" class="btn btn-primary">${icon('search')}</button></form>\n`,
  );
  push(`</div></div></header>\n<main class="content"><div class="container"><div class="row">\n<article class="col-md-8 post">\n`);

  // Breadcrumb: home and the tree parent, relative.
  const parent = i === 0 ? 0 : Math.floor((i - 1) / TREE_FANOUT);
  push(
    `<nav class="breadcrumb" aria-label="Breadcrumb"><ol><li>${a(relativeHref(dir, '/'), 'Home')}</li><li>${a(href(parent, 2), title(2))}</li><li aria-current="page"><span>${pageTitle}</span></li></ol></nav>\n`,
  );
  push(
    `<h1 class="post-title">${pageTitle}</h1>\n<div class="post-meta"><span class="author">${icon('user')}<span>${title(2)}</span></span><time datetime="2024-05-0${int(1, 9)}">May ${int(1, 28)}, 2024</time><span class="reading-time">${int(2, 15)} min read</span></div>\n`,
  );

  // Body text: paragraphs with inline markup; the tree children and related pages are linked inline.
  const children = treeChildren(i, pages);
  const related = Array.from({ length: int(d.related[0], d.related[1]) }, () => int(0, pages - 1));
  if (related.length > 2) related.push(related[0]!); // a duplicate, spelled differently
  const inline = [...children, ...related];
  const paragraphs = int(d.paragraphs[0], d.paragraphs[1]);
  for (let k = 0; k < paragraphs; k++) {
    push(`<div class="block block-${k}"><div class="block-inner"><p class="lead-${k % 3}">`);
    const sentences = int(3, 5);
    for (let s = 0; s < sentences; s++) {
      push(`<span class="s">${title(int(5, 9))} <em>${words(int(1, 3))}</em> ${words(int(3, 8))}`);
      if (inline.length > 0 && r() < 0.45) push(` ${a(href(inline.shift()!), words(int(2, 4)))}`);
      push(` <strong>${words(int(1, 2))}</strong>.</span> `);
    }
    push('</p></div></div>\n');
    if (k === 3) {
      push(
        `<figure class="figure"><picture><source srcset="/static/img/p${i}-${k}.webp 1x, /static/img/p${i}-${k}@2x.webp 2x" type="image/webp">`,
      );
      push(
        `<img src="/static/img/p${i}-${k}.jpg" alt="${words(4)}" loading="lazy" width="800" height="450"></picture><figcaption>${words(8)}</figcaption></figure>\n`,
      );
    }
  }
  while (inline.length > 0) push(`<p class="more">${a(href(inline.shift()!), `Read more: ${title(3)}`)}</p>\n`);

  // A specification table: many small cells, as product and documentation pages have.
  const rows = int(d.rows[0], d.rows[1]);
  push(
    `<div class="table-responsive"><table class="table specs"><thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Unit</th><th scope="col">Notes</th></tr></thead><tbody>\n`,
  );
  for (let k = 0; k < rows; k++) {
    push(
      `<tr class="row-${k % 2 ? 'odd' : 'even'}"><td><span class="label">${title(1)}</span></td><td><code>${int(1, 9999)}</code></td><td><abbr title="${words(2)}">${pick(['mm', 'kg', 'ms', 'px'])}</abbr></td><td><span class="badge bg-${pick(['info', 'warning', 'success'])}">${words(1)}</span> ${words(int(2, 5))}</td></tr>\n`,
    );
  }
  push('</tbody></table></div>\n');

  // Cards of other hosts' pages (absolute or protocol-relative).
  push('<section class="cards"><h2>Elsewhere on the network</h2><div class="row row-cols-3">\n');
  const crossCount = shape.hosts.length > 1 ? d.cards : 0;
  for (let k = 0; k < crossCount; k++) {
    const other = (h + 1 + int(0, shape.hosts.length - 2)) % shape.hosts.length;
    const t = int(0, pages - 1);
    crossHost.push([other, t]);
    const o = shape.hosts[other]!;
    const link = k % 2 === 0 ? `${o.origin}${pagePath(t)}` : `//${o.authority}${pagePath(t)}`;
    push(
      `<div class="col"><div class="card h-100"><img class="card-img-top" src="/static/img/card-${k}.jpg" alt=""><div class="card-body"><h3 class="card-title">${a(link, title(3))}</h3><p class="card-text">${words(int(10, 18))}</p></div><div class="card-footer"><small class="text-muted">${words(3)}</small></div></div></div>\n`,
    );
  }
  push('</div></section>\n');

  // Comments: deep nesting, many small elements, no links.
  const comments = int(d.comments[0], d.comments[1]);
  push('<section id="comments" class="comments"><h2>Comments</h2><ul class="comment-list">\n');
  for (let k = 0; k < comments; k++) {
    push(
      `<li class="comment"><div class="comment-body"><div class="comment-author"><img class="avatar" src="/static/img/avatar-${int(1, 40)}.png" alt="" width="32" height="32"><b class="fn">${title(2)}</b></div>`,
    );
    push(
      `<div class="comment-meta"><time>${int(1, 28)} days ago</time></div><div class="comment-content"><p>${words(int(12, 30))}</p></div>`,
    );
    push(
      `<div class="reply"><button class="btn btn-link" data-id="${i}-${k}">Reply</button><span class="likes">${icon('heart')}${int(0, 99)}</span></div></div></li>\n`,
    );
  }
  push('</ul></section>\n</article>\n');

  // Sidebar: disallowed paths, external sites, non-http links.
  push('<aside class="col-md-4 sidebar"><div class="widget"><h2 class="widget-title">Your account</h2><ul>\n');
  push(`<li>${a(`/private/account-${i % 7}.html`, 'Account')}</li><li>${a(`/cart/add?item=${i}`, 'Add to cart')}</li>\n`);
  push(`<li>${a('javascript:void(0)', 'Open chat')}</li><li>${a(`mailto:sales@host${h}.example`, 'Email sales')}</li></ul></div>\n`);
  push('<div class="widget"><h2 class="widget-title">Around the web</h2><ul class="ext">\n');
  shape.external.forEach((origin, k) => {
    const link =
      k === 1
        ? `//${origin.slice('http://'.length)}/share?u=${encodeURIComponent(`${host.origin}${path}`)}`
        : `${origin}/${pick(WORDS)}.html`;
    push(`<li>${a(link, title(2))}</li>\n`);
  });
  push('</ul></div>\n<div class="widget tags"><h2 class="widget-title">Tags</h2><div class="tag-cloud">');
  for (let k = 0; k < 12; k++) push(`<span class="tag tag-${k}">${pick(WORDS)}</span>`);
  push('</div></div></aside>\n</div></div></main>\n');

  // A sitemap-like list (many-links pages): same-host pages in every spelling.
  if (d.sitemap > 0) {
    push('<section class="sitemap"><h2>All pages</h2><ul class="columns-4">\n');
    for (let k = 0; k < d.sitemap; k++) push(`<li>${a(href(int(0, pages - 1)), title(2))}</li>\n`);
    push('</ul></section>\n');
  }

  // Footer: the same few pages again, spelled absolute and protocol-relative.
  if (d.footer) {
    push('<footer class="site-footer"><div class="container"><div class="row">\n<div class="col"><h2>Company</h2><ul>\n');
    for (const [k, t] of [1, 2, 3].entries()) if (t < pages) push(`<li>${a(href(t, k === 0 ? 4 : k === 1 ? 5 : 0), title(1))}</li>\n`);
    push(
      `<li>${a(href(0, 4), 'Home')}</li>\n</ul></div>\n<div class="col"><h2>Contact</h2><ul><li>${a('tel:+15555550100', 'Call us')}</li><li>${a('#top', 'Back to top')}</li></ul>`,
    );
    push(`<div class="social">${['x', 'fb', 'in', 'yt'].map((s) => `<span class="social-${s}">${icon(s)}</span>`).join('')}</div></div>\n`);
    push(`</div><p class="copyright">&copy; 2024 Host ${h}. ${words(10)}</p></div></footer>\n`);
  }
  push('</div>\n');
  push(
    '<script src="/static/js/vendor.js" defer></script>\n<script>(function(){var d=document,e=d.documentElement;e.className=e.className.replace("no-js","js");',
  );
  push(
    `var b=d.querySelectorAll(".reply button");for(var i=0;i<b.length;i++){b[i].addEventListener("click",function(ev){ev.preventDefault();console.log("reply",this.dataset.id)})}})();</script>\n`,
  );
  if (d.scriptKb > 0) push(bulkScript(d.scriptKb * 1024, r));
  if (d.padToKb !== undefined) {
    // A trailing inline state, as single-page apps embed it: it takes the page to its size.
    const size = int(d.padToKb[0] * 1024, d.padToKb[1] * 1024);
    const have = out.reduce((n, x) => n + x.length, 0);
    push(`<script id="__STATE__" type="application/json">${bulkJson(Math.max(0, size - have - 80), r)}</script>\n`);
  }
  push('</body>\n</html>\n');
  return { path, body: Buffer.from(out.join('')), sameHost, crossHost, anchors };
}

/** About `bytes` of minified-looking JavaScript (no markup in it: crawlers differ on that). */
function bulkScript(bytes: number, r: () => number): string {
  const parts = ['<script>(function(w,d){"use strict";var M={};'];
  let n = parts[0]!.length;
  for (let k = 0; n < bytes; k++) {
    const w = WORDS[Math.floor(r() * WORDS.length)]!;
    const line = `M.${w}${k}=function(a,b){var c=a&&a.${w}||${Math.floor(r() * 1e6)};for(var i=0;i<b;i++){c=(c*31+i)%${Math.floor(r() * 9999) + 1}}return c<b?"${w}":d.getElementById("${w}-${k}")};\n`;
    parts.push(line);
    n += line.length;
  }
  parts.push('w.M=M})(window,document);</script>\n');
  return parts.join('');
}

/** About `bytes` of CSS rules. */
function bulkStyle(bytes: number, r: () => number): string {
  const parts: string[] = [];
  for (let n = 0, k = 0; n < bytes; k++) {
    const w = WORDS[Math.floor(r() * WORDS.length)]!;
    const line = `.x-${w}-${k} > .y-${k % 9}:hover,.x-${w}-${k}::after{margin:${Math.floor(r() * 24)}px;background:url("data:image/svg+xml,%3Csvg%3E%3C/svg%3E");color:#${Math.floor(r() * 0xffffff).toString(16)}}\n`;
    parts.push(line);
    n += line.length;
  }
  return parts.join('');
}

/** About `bytes` of JSON (an array of small records). */
function bulkJson(bytes: number, r: () => number): string {
  const parts = ['{"items":['];
  for (let n = 12, k = 0; n < bytes; k++) {
    const item = `${k === 0 ? '' : ','}{"id":${k},"slug":"${WORDS[Math.floor(r() * WORDS.length)]}-${k}","score":${Math.floor(r() * 1000)},"tags":["${WORDS[Math.floor(r() * WORDS.length)]}"]}`;
    parts.push(item);
    n += item.length;
  }
  parts.push(']}');
  return parts.join('');
}
