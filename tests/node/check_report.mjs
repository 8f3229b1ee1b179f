// Loads a cgov HTML report in Debian's headless Chromium and checks it the way a reader would
// meet it. Usage:
//   node check_report.mjs REPORT.html REPORT.json OUT_PREFIX SECTION...
// REPORT.json is the JSON the page was rendered from (summary.json, or cgov report --format json);
// SECTION... the ids of the <section>s the page must have. Writes OUT_PREFIX.png (a screenshot)
// and OUT_PREFIX.pdf (printed on A4) for a person to look at. Exits 1 and names every failure.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { HtmlValidate } from 'html-validate';

const require = createRequire(import.meta.url);
const [htmlPath, jsonPath, outPrefix, ...sections] = process.argv.slice(2);
if (!htmlPath || !jsonPath || !outPrefix) {
  console.error('usage: node check_report.mjs REPORT.html REPORT.json OUT_PREFIX SECTION...');
  process.exit(2);
}
const failures = [];
const fail = (what) => failures.push(what);
const doc = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
const html = fs.readFileSync(htmlPath, 'utf8');

// 1. The markup validates (html-validate's recommended rules, offline).
const validator = new HtmlValidate({ extends: ['html-validate:recommended'] });
const report = await validator.validateString(html, htmlPath);
for (const r of report.results) {
  for (const m of r.messages) fail(`html-validate ${m.ruleId} at ${m.line}:${m.column}: ${m.message}`);
}
if (Buffer.byteLength(html) > 1024 * 1024) fail(`page is ${Buffer.byteLength(html)} bytes (> 1 MB)`);

const browser = await chromium.launch({
  executablePath: process.env.CGOV_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1150, height: 900 } });
  const page = await context.newPage();
  const pageUrl = 'file://' + path.resolve(htmlPath);
  // 2. No network: every request but the page itself is recorded and refused.
  const requests = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url === pageUrl) return route.continue();
    requests.push(url);
    return route.abort();
  });
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.goto(pageUrl, { waitUntil: 'load' });

  // 3. Every section is there.
  for (const id of sections) {
    if ((await page.locator(`section#${id}`).count()) !== 1) fail(`section #${id} missing`);
  }

  // 4. One chart per GPU, each with its two series drawn.
  const gpus = doc.gpus.length;
  const charts = await page.$$eval('figure.gpu-chart svg.chart', (svgs) => svgs.map((s) => ({
    declared: Number(s.getAttribute('data-series-count')),
    series: Array.from(s.querySelectorAll('g.series')).map((g) => ({
      name: g.getAttribute('data-series'),
      buckets: Number(g.getAttribute('data-buckets')),
      band: g.querySelector('path.band').getAttribute('d').length,
      mean: g.querySelector('path.mean').getAttribute('d').length,
      box: g.getBBox().width,
    })),
  })));
  if (gpus > 0 && charts.length !== Math.min(gpus, 64)) fail(`${charts.length} GPU charts for ${gpus} GPUs`);
  charts.forEach((c, i) => {
    if (c.declared !== 2 || c.series.length !== 2) fail(`chart ${i}: ${c.series.length} series, expected 2`);
    if (!c.series.some((s) => s.buckets > 0)) fail(`chart ${i}: no series has data`);
    for (const s of c.series) {
      if (s.buckets > 0 && (s.band === 0 || s.mean === 0 || s.box <= 0)) fail(`chart ${i} ${s.name}: drawn empty`);
    }
  });

  // 5. Every number that names its place in the JSON equals it (to the digits shown).
  const numbers = await page.$$eval('[data-json]', (els) => els.map((e) => ({
    pointer: e.getAttribute('data-json'), scale: Number(e.getAttribute('data-scale') || '1'),
    text: e.textContent })));
  const at = (pointer) => pointer.split('/').slice(1).reduce(
    (v, k) => (v === undefined || v === null ? undefined : v[k.replace(/~1/g, '/').replace(/~0/g, '~')]), doc);
  let checked = 0;
  for (const n of numbers) {
    const want = at(n.pointer);
    if (typeof want !== 'number') { fail(`${n.pointer}: not a number in the JSON (${want}), page shows "${n.text}"`); continue; }
    const cleaned = n.text.replace(/[$,%\s]/g, '');
    const shown = Number(cleaned);
    const decimals = (cleaned.split('.')[1] || '').length;
    // Half a unit of the last digit shown, plus the JSON's own rounding (3 decimals) scaled.
    const tolerance = 0.5 * 10 ** -decimals + 0.0005 * Math.abs(n.scale) + 1e-9;
    if (!Number.isFinite(shown) || Math.abs(shown - want * n.scale) > tolerance) {
      fail(`${n.pointer}: page shows "${n.text}", JSON has ${want} (x${n.scale})`);
    }
    ++checked;
  }
  if (checked < 20) fail(`only ${checked} numbers tied to the JSON`);

  // 6. A sortable table sorts from the keyboard.
  const sortable = page.locator('table.sortable').first();
  if ((await sortable.count()) === 1) {
    const header = sortable.locator('th.n button').first();
    await header.focus();
    await page.keyboard.press('Enter');
    const sorted = await sortable.evaluate((t) => {
      const th = t.querySelector('th.n');
      const col = Array.prototype.indexOf.call(th.parentNode.children, th);
      const v = Array.from(t.tBodies[0].rows).map((r) => {
        const c = r.cells[col];
        return parseFloat((c.getAttribute('data-sort') || c.textContent).replace(/[^0-9.eE+-]/g, ''));
      }).filter((x) => !Number.isNaN(x));
      return { aria: th.getAttribute('aria-sort'), ok: v.every((x, i) => i === 0 || v[i - 1] <= x) };
    });
    if (sorted.aria !== 'ascending' || !sorted.ok) fail(`sorting by keyboard: ${JSON.stringify(sorted)}`);
  }

  // 7. Accessibility: axe-core in the same page, no serious or critical violation.
  await page.evaluate(fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const axe = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length,
                                      target: v.nodes[0] && v.nodes[0].target.join(' ') }));
  });
  for (const v of axe) {
    if (v.impact === 'serious' || v.impact === 'critical') fail(`axe ${v.id} (${v.impact}) on ${v.nodes} node(s), e.g. ${v.target}`);
  }

  // 8. Dark mode changes the colours; print on A4 keeps every chart inside the page width.
  const light = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  if (light === dark) fail(`prefers-color-scheme: dark leaves the background at ${light}`);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.screenshot({ path: outPrefix + '.png', fullPage: true });
  await page.emulateMedia({ media: 'print' });
  await page.setViewportSize({ width: 718, height: 1000 });  // A4 less 1 cm margins, at 96 dpi
  const overflow = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    return Array.from(document.querySelectorAll('svg, table')).filter((e) => e.getBoundingClientRect().right > width + 1)
      .map((e) => e.tagName + (e.getAttribute('class') ? '.' + e.getAttribute('class') : '')).slice(0, 5);
  });
  if (overflow.length) fail(`printed on A4, cut at the right edge: ${overflow.join(', ')}`);
  await page.pdf({ path: outPrefix + '.pdf', format: 'A4', margin: { top: '1cm', bottom: '1cm', left: '0.5cm', right: '0.5cm' } });

  if (requests.length) fail(`network requests: ${requests.slice(0, 5).join(' ')}`);
  if (consoleErrors.length) fail(`console errors: ${consoleErrors.slice(0, 5).join(' | ')}`);
  console.log(`checked ${checked} numbers, ${charts.length} charts, ${sections.length} sections, ${axe.length} minor axe notes`);
} finally {
  await browser.close();
}
for (const f of failures) console.error('FAIL ' + f);
process.exit(failures.length ? 1 : 0);
