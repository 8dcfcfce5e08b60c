import { describe, expect, it } from 'vitest'
import { basic } from '../helpers/app.js'
import { checkAnswer, f, type Req, send, useFuzzApp } from './fuzz-harness.js'

/** The bugs the fuzzing properties found, each as its minimal request (they fail until fixed). */

useFuzzApp()

describe('found by fuzzing: minimal reproductions', () => {
  const sk = () => ({ authorization: basic(f.keys.skTest) })

  it('a path with a bad percent-encoding gets the envelope and a Request-Id', async () => {
    const r: Req = { method: 'GET', url: '/v2/charges/%zz', headers: sk() }
    checkAnswer(r, await send(r), true)
  })

  it('a path id over 300 characters gets the envelope and a Request-Id, in a catalog status', async () => {
    const r: Req = { method: 'GET', url: `/v2/charges/${'a'.repeat(301)}`, headers: sk() }
    checkAnswer(r, await send(r), true)
  })

  it('QUERY without a Content-Type is not a 500', async () => {
    const r: Req = { method: 'QUERY', url: '/v2/me', headers: sk() }
    checkAnswer(r, await send(r), true)
  })

  it('POST /v2/me/webhook_secret/roll refuses unknown fields (422) and keeps the secret', async () => {
    const before = JSON.parse((await send({ method: 'GET', url: '/v2/me', headers: sk() })).body).webhook_secret
    const r: Req = {
      method: 'POST',
      url: '/v2/me/webhook_secret/roll',
      headers: { ...sk(), 'content-type': 'application/json' },
      payload: '{"unknown":1}',
    }
    const res = await send(r)
    checkAnswer(r, res, true)
    expect(res.statusCode).toBe(422)
    const after = JSON.parse((await send({ method: 'GET', url: '/v2/me', headers: sk() })).body).webhook_secret
    expect(after).toBe(before)
  })
})
