import { type Account, createClient, type JackdawClient } from '../src/client/api.js'

/**
 * The signed-in key lives in this tab's sessionStorage only: gone when the tab closes, never in a
 * cookie, a URL or storage another tab or a later visit can read.
 */
const STORAGE = 'jackdaw.dashboard.key'

export interface Session {
  key: string
  account: Account
  client: JackdawClient
}

export function clientFor(key: string): JackdawClient {
  return createClient({ apiKey: key, baseUrl: location.origin, maxRetries: 1 })
}

export async function signIn(key: string): Promise<Session> {
  const client = clientFor(key)
  const account = await client.me.retrieve()
  sessionStorage.setItem(STORAGE, key)
  return { key, account, client }
}

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE)
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE)
}
