import { readFileSync } from 'node:fs'
const [file, lastSec = '6', topN = '45'] = process.argv.slice(2)
const p = JSON.parse(readFileSync(file, 'utf8'))
const nodes = new Map(p.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
let t = p.startTime; const times = p.samples.map((_, i) => (t += p.timeDeltas[i]))
const end = p.endTime, from = end - Number(lastSec) * 1e6
const self = new Map(), byUrl = new Map(), incl = new Map()
let total = 0, idle = 0
for (let i = 0; i < p.samples.length; i++) {
  if (times[i] < from) continue
  const n = nodes.get(p.samples[i]); const cf = n.callFrame
  const dt = p.timeDeltas[i + 1] ?? 0
  if (cf.functionName === '(idle)') { idle += dt; continue }
  total += dt
  const k = `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber}`
  self.set(k, (self.get(k) ?? 0) + dt)
  const m = cf.url.match(/node_modules\/((@[^/]+\/)?[^/]+)/); const u = m ? m[1] : cf.url.includes('/dist/') ? 'jackdaw:' + cf.url.split('/dist/')[1] : cf.url.startsWith('node:') ? cf.url : (cf.url || cf.functionName)
  byUrl.set(u, (byUrl.get(u) ?? 0) + dt)
  const seen = new Set(); let id = p.samples[i]
  while (id !== undefined) { const nn = nodes.get(id); const key = `${nn.callFrame.functionName || '(anon)'} ${nn.callFrame.url.split('/').slice(-2).join('/')}:${nn.callFrame.lineNumber}`; if (!seen.has(key)) { seen.add(key); incl.set(key, (incl.get(key) ?? 0) + dt) } id = parent.get(id) }
}
const pr = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).forEach(([k, v]) => console.log((100 * v / total).toFixed(1).padStart(5), k))
console.log('busy ms', (total / 1000).toFixed(0), 'idle ms', (idle / 1000).toFixed(0))
console.log('--- by package'); pr(byUrl, 25)
console.log('--- self'); pr(self, Number(topN))
console.log('--- inclusive (jackdaw)'); pr(new Map([...incl].filter(([k]) => !k.includes('node_modules') && !k.startsWith('(') )), 40)
