// The ceiling: a bare Fastify route answering a fixed 1 KB JSON body, on the same machine.
import Fastify from 'fastify'

const body = { object: 'list', data: Array.from({ length: 8 }, (_, i) => ({ id: `obj_${i}`, text: 'x'.repeat(100) })) }
const app = Fastify()
app.get('/bare', async () => body)
const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
process.stdout.write(`listening on ${address}\n`)
