/** The --help text of the command line and of each of its commands. */
export const HELP: Record<string, string> = {
  main: `jackdaw: a self-hosted payment service

Usage: jackdaw <command> [options]

Commands:
  serve                      run the service (see: jackdaw serve --help)
  account create             make an account and print its keys
  account roll-key           replace one of an account's keys
  webhook-secret roll        replace an account's notify signing secret
  deliveries redeliver ID    queue a failed notify delivery for one more attempt
  processor                  run the payment simulator as a separate processor service
  listen --forward-to URL    forward the account's events, signed, to a local address
  trigger SCENARIO           run a test-mode scenario (a charge, a refund, …) and print its ids
  trigger --list             list the scenarios and their overrides

listen and trigger reach a running service over its API: --api-url (else JACKDAW_API_URL, else
http://127.0.0.1:$PORT) with --key (else JACKDAW_API_KEY). The other commands open the store;
it and every setting come from the environment, as for the service:
  JACKDAW_DATA_DIR (embedded PostgreSQL, default ./data) or DATABASE_URL (your PostgreSQL),
  JACKDAW_ENCRYPTION_KEY, PORT, HOST, LOG_LEVEL (README.md lists them all).
Every command takes --help.
`,
  serve: `Usage: jackdaw serve [--workers N]

Runs the API. With --workers N above 1, runs N processes on one port, all on one PostgreSQL.
`,
  account: `Usage:
  jackdaw account create --name NAME [--json]
      Makes an account; prints its id and four keys (secret and public, test and live) and its
      webhook secrets. Secret keys are stored hashed: this is the only time they are shown.
  jackdaw account roll-key --account ID --kind secret|public --mode test|live [--json]
      Replaces that key; the old one stops working.
`,
  'webhook-secret': `Usage: jackdaw webhook-secret roll --account ID --mode test|live [--json]

Replaces the secret that signs notify calls of that mode, and prints the new one.
`,
  deliveries: `Usage: jackdaw deliveries redeliver DELIVERY_ID [--json]

Queues a failed notify delivery (dlv_…) for one more attempt, which a running service's delivery
worker makes.
`,
  processor: `Usage: jackdaw processor [--port N] [--host H]

Runs the payment simulator as a separate processor service over HTTP. Point the service at it
with JACKDAW_LIVE_PROCESSOR_URL=http://H:N and the same JACKDAW_LIVE_PROCESSOR_SECRET, and live
mode runs end to end against it. Defaults: port 9090, host 127.0.0.1.
`,
  listen: `Usage: jackdaw listen --forward-to URL [--events TYPE,…] [--key sk_test_…] [--api-url URL]

Streams the account's events as they happen and POSTs each to URL as a notify call is made (the
same body, and Jackdaw-Signature with the webhook secret of the key's mode, which it prints
first; no Jackdaw-Delivery, as a forwarded event is no delivery of the service's), printing one line per event with the receiver's status and time. A dropped
connection resumes after the last event received, missing none. Ctrl-C stops it.

  --forward-to URL     where to send each event (e.g. http://localhost:3000/webhooks/jackdaw)
  --events LIST        only these types, comma-separated (e.g. charge.succeeded,charge.refunded)
  --key KEY            a secret key (default: JACKDAW_API_KEY)
  --api-url URL        the service (default: JACKDAW_API_URL, else http://127.0.0.1:$PORT)
`,
  trigger: `Usage: jackdaw trigger SCENARIO [overrides] [--json] [--key sk_test_…] [--api-url URL]
       jackdaw trigger --list [--json] [--key sk_test_…] [--api-url URL]

Runs a test-mode scenario through the service, as a client taking its steps would, with the
same events and notify calls, and prints one line per object it made (e.g. "charge  ch_…").
--list names every scenario, what it does and the overrides it takes. A test secret key only.

  --amount N           the charge amount, in the smallest currency unit (default 1000)
  --currency CODE      the charge currency (default usd)
  --metadata K=V       the charge's metadata; repeat for more keys
  --decline-code CODE  charge.failed: the decline (card_declined, insufficient_funds, …)
  --customer ID|JSON   a customer id, or a new customer ('{"email": …, "description": …}')
  --notify URL         the source's notify address: the run's events are sent there
  --json               print the whole answer
  --key KEY            a secret test key (default: JACKDAW_API_KEY)
  --api-url URL        the service (default: JACKDAW_API_URL, else http://127.0.0.1:$PORT)
`,
}
