import { Redis } from 'ioredis'

/** How long a Redis command may take before the request goes on without it. */
const COMMAND_TIMEOUT_MS = 500

/**
 * The client the rate limit and the count of unknown keys share across processes. Its commands
 * fail at once while Redis is down, and after COMMAND_TIMEOUT_MS when it stops answering without
 * closing the connection (a host lost, packets dropped): the rate limit then lets requests
 * through, and unknown keys are counted by each process alone, rather than every request waiting
 * on Redis.
 */
export function openRedis(url: string, onError: (err: Error) => void): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: COMMAND_TIMEOUT_MS,
  })
  redis.on('error', onError)
  return redis
}
