import { createSocket } from 'node:dgram'
import dnsPacket from 'dns-packet'

/** What the name server does with one question: the addresses to answer, no such name, or nothing. */
export type DnsAnswer = string[] | 'nxdomain' | 'silent'

export interface FakeDns {
  /** `127.0.0.1:port`, for a resolver's servers */
  server: string
  /** every question asked, as `name type` */
  asked: string[]
  close(): Promise<void>
}

/**
 * A name server on 127.0.0.1 over UDP that answers A and AAAA questions as `answer` says; `n`
 * counts the questions asked for that name and type before this one.
 */
export async function fakeDns(answer: (name: string, type: 'A' | 'AAAA', n: number) => DnsAnswer): Promise<FakeDns> {
  const socket = createSocket('udp4')
  const asked: string[] = []
  const counts = new Map<string, number>()
  socket.on('message', (message, peer) => {
    const query = dnsPacket.decode(message)
    const question = query.questions?.[0]
    if (!question || (question.type !== 'A' && question.type !== 'AAAA')) return
    const key = `${question.name} ${question.type}`
    asked.push(key)
    const n = counts.get(key) ?? 0
    counts.set(key, n + 1)
    const said = answer(question.name, question.type, n)
    if (said === 'silent') return
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
      rcode: said === 'nxdomain' ? 'NXDOMAIN' : 'NOERROR',
      questions: [question],
      answers:
        said === 'nxdomain'
          ? []
          : said.map((data) => ({ type: question.type, class: 'IN' as const, name: question.name, ttl: 60, data })),
    } as dnsPacket.Packet)
    socket.send(reply, peer.port, peer.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  return {
    server: `127.0.0.1:${socket.address().port}`,
    asked,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  }
}
