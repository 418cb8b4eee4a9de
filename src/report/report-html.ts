import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ReportData } from './report-data.js';

/** Chart.js's standalone build, read from node_modules once per report and inlined. */
function chartJs(): string {
  const main = createRequire(import.meta.url).resolve('chart.js');
  return readFileSync(join(dirname(main), 'chart.umd.min.js'), 'utf8').replace(/<\/script/gi, '<\\/script');
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function num(n: number): string {
  return n.toLocaleString('en-US');
}

function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

function tile(key: string, value: number, label: string, shown = num(value)): string {
  return `<div class="tile"><div class="n" data-num="${key}" data-value="${value}">${esc(shown)}</div><div class="l">${esc(label)}</div></div>`;
}

function hostsTable(r: ReportData): string {
  const cols: [keyof ReportData['hosts'][number], string, boolean][] = [
    ['host', 'host', false],
    ['pages', 'pages', true],
    ['bytes', 'bytes', true],
    ['errors', 'errors', true],
    ['robotsDisallowed', 'robots-disallowed', true],
    ['retrying', 'retrying', true],
    ['lease', 'lease holder', false],
  ];
  const head = cols
    .map(([k, label, n]) => `<th${n ? ' class="r"' : ''} data-key="${k}" data-type="${n ? 'num' : 'text'}">${esc(label)}</th>`)
    .join('');
  const rows = r.hosts
    .map(
      (h) =>
        `<tr>${cols
          .map(([k, , n]) => {
            const v = h[k];
            return n ? `<td class="r" data-v="${v}">${num(v as number)}</td>` : `<td>${esc(v === null ? '—' : String(v))}</td>`;
          })
          .join('')}</tr>`,
    )
    .join('\n');
  const note =
    r.totals.hosts > r.hosts.length ? `<p class="note">The ${num(r.hosts.length)} busiest of ${num(r.totals.hosts)} hosts.</p>` : '';
  return `<table id="hosts" class="sortable"><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>${note}`;
}

function errorsTable(r: ReportData): string {
  if (r.errors.length === 0) return '<p class="note">No errors.</p>';
  const rows = r.errors
    .map(
      (e) =>
        `<tr><td><code>${esc(e.code)}</code></td><td class="r" data-v="${e.count}">${num(e.count)}</td><td class="r">${num(e.final)}</td><td>${e.examples
          .map((x) => `<div class="ex"><a href="${esc(x.url)}" rel="noreferrer">${esc(x.url)}</a> <span>${esc(x.message)}</span></div>`)
          .join('')}</td></tr>`,
    )
    .join('\n');
  return `<table id="errors"><thead><tr><th>code</th><th class="r">count</th><th class="r">final</th><th>examples</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function nodesTable(r: ReportData): string {
  if (r.nodes.length === 0) return '<p class="note">No node records.</p>';
  const dash = '<span class="note">—</span>';
  const rows = r.nodes
    .map(
      (n) =>
        `<tr><td>${esc(n.id)}</td><td>${esc(n.state)}${n.alive === false ? ' (dead)' : ''}</td><td class="r" data-v="${n.pages}">${num(n.pages)}</td>` +
        `<td class="r">${n.rate === null ? dash : n.rate}</td><td>${n.hostname === null ? dash : esc(n.hostname)}</td>` +
        `<td>${n.lastSeen === null ? dash : `${esc(n.lastSeen)} <span class="note">(${n.lastSeenFrom})</span>`}</td></tr>`,
    )
    .join('\n');
  const exited = r.nodes.some((n) => n.state === 'exited')
    ? '<p class="note">A node removes its record when it ends: for a node that exited, the machine is read from its WARC files (when it wrote any) and the last page it fetched stands for its last heartbeat.</p>'
    : '';
  return `<table id="nodes"><thead><tr><th>node</th><th>state</th><th class="r">pages</th><th class="r">pages/s (last)</th><th>machine</th><th>last seen</th></tr></thead><tbody>${rows}</tbody></table>${exited}`;
}

/** Most WARC files listed before the rest is folded away. */
const WARC_SHOWN = 10;

function warcTable(r: ReportData): string {
  if (r.warc.length === 0) return '<p class="note">No WARC files (crawl with --warc to write them).</p>';
  const row = (f: ReportData['warc'][number]): string =>
    `<tr><td><code>${esc(f.name)}</code>${f.open ? ' <span class="note">(open)</span>' : ''}</td><td class="r" data-v="${f.bytes}">${bytes(f.bytes)}</td></tr>`;
  const table = (files: ReportData['warc']): string =>
    `<table class="warc"><thead><tr><th>file</th><th class="r">size</th></tr></thead><tbody>${files.map(row).join('\n')}</tbody></table>`;
  const rest = r.warc.slice(WARC_SHOWN);
  return (
    table(r.warc.slice(0, WARC_SHOWN)) +
    (rest.length === 0 ? '' : `<details><summary>${num(rest.length)} more files</summary>${table(rest)}</details>`)
  );
}

const PAGE_CSS = `
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{font-size:18px;margin:0}header p{margin:2px 0 0;color:#aab3c5;font-size:12px}
main{padding:16px 24px;max-width:1400px;margin:auto}header p{overflow-wrap:anywhere}.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin-bottom:16px}
.tile{background:#fff;border-radius:8px;padding:10px 14px;box-shadow:0 1px 2px #0001}.tile .n{font-size:22px;font-weight:600}.tile .l{color:#667;font-size:12px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(420px,100%),1fr));gap:14px}.card{min-width:0}.card{background:#fff;border-radius:8px;padding:12px 16px;box-shadow:0 1px 2px #0001}
.card h2{font-size:14px;margin:0 0 8px}.card.wide{grid-column:1/-1}.chart{position:relative;height:240px;overflow:hidden}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{padding:4px 8px;border-bottom:1px solid #eceef2;text-align:left;vertical-align:top}
td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}th{background:#f0f2f5;position:sticky;top:0}table.sortable th{cursor:pointer;user-select:none}
th.asc::after{content:" ▲"}th.desc::after{content:" ▼"}.scroll{max-height:480px;overflow:auto}.ex{font-size:12px;word-break:break-all}.ex span{color:#667}
.note{color:#667;font-size:12px}code{font-size:12px}.wrap{overflow-x:auto}summary{cursor:pointer;margin:6px 0;font-size:12px}
@media (max-width:600px){header,main{padding-left:10px;padding-right:10px}.card{padding:10px}.tiles{grid-template-columns:repeat(2,1fr)}}
`;

/** Draws the charts and makes the hosts table sortable; runs in the page. */
const SCRIPT = `
(function(){
var R=JSON.parse(document.getElementById('report-data').textContent);
Chart.defaults.animation=false;Chart.defaults.responsive=true;Chart.defaults.maintainAspectRatio=false;
var noData={id:'noData',afterDraw:function(c){var any=c.data.datasets.some(function(d){return d.data.some(function(v){return v>0})});
 if(!any){var x=c.ctx;x.save();x.fillStyle='#889';x.font='14px sans-serif';x.textAlign='center';x.fillText('no data yet',c.width/2,c.height/2);x.restore();}}};
Chart.register(noData);
var C=['#3b6fd8','#e0662f','#2e9c6a','#c8406d','#8a5cd1','#c9a227','#1f9bb5','#7d8597','#a0522d','#5f9ea0','#d2691e','#6b8e23','#999'];
function t(i){var d=new Date(Date.parse(R.timeline.start)+i*R.timeline.bucketSeconds*1000);return d.toISOString().slice(11,19);}
var tl=R.timeline,labels=tl.pages.map(function(_,i){return t(i)});
function rate(a){return a.map(function(v){return +(v/tl.bucketSeconds).toFixed(2)})}
function cum(a){var s=0;return a.map(function(v){return s+=v})}
var charts={};
function mk(id,cfg){charts[id]=new Chart(document.getElementById(id),cfg);}
mk('chart-timeline',{type:'line',data:{labels:labels,datasets:[{label:'pages/s',data:rate(tl.pages),borderColor:C[0],backgroundColor:C[0]+'33',fill:true,pointRadius:0},{label:'errors/s',data:rate(tl.errors),borderColor:C[1],pointRadius:0}]},options:{scales:{y:{beginAtZero:true}}}});
var st=Object.keys(R.status);
// Each bar is labelled with its count, and drawn at least a few pixels high: one 404 next to a thousand 200s still shows.
mk('chart-status',{type:'bar',data:{labels:st.map(function(k){return (k==='none'?'no answer':k)+' ('+R.status[k].toLocaleString('en-US')+')'}),datasets:[{label:'responses',minBarLength:4,data:st.map(function(k){return R.status[k]}),backgroundColor:st.map(function(k){return k[0]==='2'?C[2]:k[0]==='3'?C[0]:k[0]==='4'?C[5]:C[1]})}]},options:{plugins:{legend:{display:false}}}});
var ct=Object.keys(R.contentTypes);
mk('chart-types',{type:'doughnut',data:{labels:ct,datasets:[{data:ct.map(function(k){return R.contentTypes[k]}),backgroundColor:C}]},options:{plugins:{legend:{position:'right'}}}});
mk('chart-depth',{type:'bar',data:{labels:R.depth.map(function(_,i){return String(i)}),datasets:[{label:'pages',minBarLength:4,data:R.depth,backgroundColor:C[4]}]},options:{plugins:{legend:{display:false}},scales:{x:{title:{display:true,text:'depth (hops from a seed)'}}}}});
mk('chart-errors',{type:'bar',data:{labels:R.errors.map(function(e){return e.code+' ('+e.count.toLocaleString('en-US')+')'}),datasets:[{label:'final',minBarLength:4,data:R.errors.map(function(e){return e.final}),backgroundColor:C[1]},{label:'retrying',data:R.errors.map(function(e){return e.count-e.final}),backgroundColor:C[5]}]},options:{indexAxis:'y',scales:{x:{stacked:true,beginAtZero:true},y:{stacked:true}}}});
// Links outnumber pages many times over: each has its own axis (links left, pages right), so that neither line is flat.
mk('chart-links',{type:'line',data:{labels:labels,datasets:[{label:'links found (cumulative, left axis)',data:cum(tl.links),borderColor:C[3],pointRadius:0,yAxisID:'y'},{label:'pages crawled (cumulative, right axis)',data:cum(tl.pages),borderColor:C[0],pointRadius:0,yAxisID:'y1'}]},options:{scales:{y:{beginAtZero:true,position:'left',title:{display:true,text:'links found',color:C[3]},ticks:{color:C[3]}},y1:{beginAtZero:true,position:'right',grid:{drawOnChartArea:false},title:{display:true,text:'pages crawled',color:C[0]},ticks:{color:C[0]}}}}});
var tb=document.getElementById('hosts');
tb.querySelectorAll('th').forEach(function(th,col){th.addEventListener('click',function(){
 var asc=!th.classList.contains('asc');tb.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc')});th.classList.add(asc?'asc':'desc');
 var num=th.dataset.type==='num',body=tb.tBodies[0],rows=Array.prototype.slice.call(body.rows);
 rows.sort(function(a,b){var x=a.cells[col],y=b.cells[col];var c=num?(+x.dataset.v)-(+y.dataset.v):x.textContent.localeCompare(y.textContent);return asc?c:-c});
 rows.forEach(function(r){body.appendChild(r)});});});
window.__charts=charts;document.body.dataset.ready='1';
})();
`;

/**
 * The report as one self-contained HTML file: styles, data and scripts (Chart.js included)
 * inline, nothing fetched when it is opened.
 */
export function renderReport(r: ReportData): string {
  const t = r.totals;
  const data = JSON.stringify(r).replace(/</g, '\\u003c');
  const chart = (id: string, title: string, wide = false): string =>
    `<section class="card${wide ? ' wide' : ''}"><h2>${esc(title)}</h2><div class="chart"><canvas id="${id}"></canvas></div></section>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>mountcrawl report: ${esc(r.data)}</title><style>${PAGE_CSS}</style></head>
<body><header><h1>mountcrawl report</h1><p>${esc(r.data)} · generated ${esc(r.generatedAt)}${
    r.firstFetchAt ? ` · first fetch ${esc(r.firstFetchAt)}` : ''
  }</p></header><main>
<div class="tiles">${[
    tile('pages', t.pages, 'pages crawled'),
    tile('htmlPages', t.htmlPages, 'HTML pages stored'),
    tile('bytes', t.bytes, 'HTML bytes', bytes(t.bytes)),
    tile('errors', t.errors, `errors (${num(t.errorsFinal)} final)`),
    tile('retrying', t.retrying, 'retrying'),
    tile('robotsDisallowed', t.robotsDisallowed, 'excluded by robots.txt'),
    tile('hosts', t.hosts, 'hosts'),
    tile('linksFound', t.linksFound, 'links found'),
    tile('distinctLinks', t.distinctLinks, 'distinct links'),
    tile('seeds', t.seeds, 'seeds'),
    tile('nodes', r.nodes.length, 'nodes'),
    tile('warcFiles', t.warcFiles, `WARC files (${bytes(t.warcBytes)})`),
  ].join('')}</div>
<div class="grid">
${chart('chart-timeline', `Pages fetched over time (per second, ${r.timeline.bucketSeconds} s buckets)`, true)}
${chart('chart-status', 'Status codes')}
${chart('chart-types', 'Content types')}
${chart('chart-depth', 'Depth')}
${chart('chart-errors', 'Errors by code (and URLs robots.txt excludes)')}
${chart('chart-links', 'Links found against pages crawled', true)}
<section class="card wide"><h2>Errors and robots.txt exclusions, with examples</h2><div class="scroll">${errorsTable(r)}</div></section>
<section class="card wide"><h2>Hosts (click a column to sort)</h2><div class="scroll">${hostsTable(r)}</div></section>
<section class="card wide"><h2>Nodes</h2><div class="wrap">${nodesTable(r)}</div></section>
<section class="card wide"><h2>WARC files</h2><div class="wrap">${warcTable(r)}</div></section>
</div></main>
<script type="application/json" id="report-data">${data}</script>
<script>${chartJs()}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
