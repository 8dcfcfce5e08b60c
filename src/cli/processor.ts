import type { FastifyBaseLogger } from 'fastify'

/** A command's failure that its options caused: told in one line, without a stack. */
export class CommandError extends Error {}

/** A `--port` as given: 0 (any free port) to 65535, in digits only; else undefined. */
export function portOf(value: string): number | undefined {
  if (!/^\d{1,5}$/.test(value)) return undefined
  const port = Number(value)
  return port <= 65535 ? port : undefined
}

/** Why nothing can listen at `host` and `port`, naming the option to change; undefined for any other failure. */
function listenProblem(err: unknown, host: string, port: number): string | undefined {
  const code = err instanceof Error && 'code' in err ? err.code : undefined
  const why = (err as Error | undefined)?.message
  if (code === 'EADDRINUSE') return `--port ${port} is in use on ${host}: give another --port (0 takes a free one)`
  if (code === 'EACCES') return `--port ${port} needs privileges this user lacks: give a port above 1023`
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL') {
    return `--host ${host} names no address of this machine to listen on: ${why}`
  }
  return undefined
}

/**
 * `jackdaw processor`: the simulator behind HTTP at `host` and `port`, until the process is
 * stopped. Answers the address it listens at.
 */
export async function runProcessor(opts: {
  secret: string
  logger: FastifyBaseLogger
  host: string
  port: number
}): Promise<string> {
  // loaded when the command runs: every other command imports this module, for CommandError
  const [{ createProcessorServer }, { Simulator }] = await Promise.all([
    import('../processor/server.js'),
    import('../processor/simulator.js'),
  ])
  const server = createProcessorServer({ processor: new Simulator(), secret: opts.secret, logger: opts.logger })
  try {
    return await server.listen({ port: opts.port, host: opts.host })
  } catch (err) {
    const problem = listenProblem(err, opts.host, opts.port)
    if (problem === undefined) throw err
    await server.close().catch(() => {})
    throw new CommandError(problem)
  }
}
