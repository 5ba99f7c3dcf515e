import { spawn } from 'node:child_process';
import { AniLink } from 'anilink-api-wrapper';
import { request, Agent } from 'undici';
const srv = spawn('/work/main/bench/target/release/bench-server', ['--port', '0'], { stdio: ['pipe', 'pipe', 'inherit'] });
const port = await new Promise((res) => srv.stdout.on('data', (d) => { const m = /listening (\d+)/.exec(String(d)); if (m) res(m[1]); }));
const url = `http://127.0.0.1:${port}`;
const kind = process.argv[2], c = Number(process.argv[3] ?? 32), n = Number(process.argv[4] ?? 20000);
let fn;
if (kind === 'anilink') { const a = new AniLink({ anilist: { baseUrl: url, maxSockets: c, maxFreeSockets: c } }); fn = () => a.anilist.query.media({ id: 1 }); }
if (kind === 'custom') { const a = new AniLink({ anilist: { baseUrl: url, maxSockets: c, maxFreeSockets: c } }); fn = () => a.anilist.custom('query { Media(id: 1) { id } }'); }
if (kind === 'undici') { const agent = new Agent({ connections: c }); fn = async () => { const r = await request(url, { method: 'POST', dispatcher: agent, body: '{"query":"query { Media(id: 1) { id } }"}', headers: {'content-type': 'application/json'} }); return JSON.parse(await r.body.text()); }; }
for (let i = 0; i < 2000; i++) await fn();
const cpu0 = process.cpuUsage(); const t0 = performance.now(); let next = 0;
await Promise.all(Array.from({length: c}, async () => { while (next++ < n) await fn(); }));
const ms = performance.now() - t0; const cpu = process.cpuUsage(cpu0);
console.log(kind, 'c=' + c, Math.round(n / ms * 1000), 'req/s', ((cpu.user + cpu.system) / n).toFixed(1), 'cpu us/req');
srv.stdin.end(); srv.kill();
process.exit(0);
