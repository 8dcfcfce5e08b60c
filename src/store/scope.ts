/** Whose objects a request may see: one account, one mode. */
export interface Scope {
  accountId: string
  livemode: boolean
}
