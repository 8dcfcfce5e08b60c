import { parseConfig } from '../src/config.js'
for (const v of ['0', '2592001', '1.5', 'a day']) { try { console.log(v, parseConfig({ JACKDAW_PAYER_TIMEOUT_SECONDS: v }).JACKDAW_PAYER_TIMEOUT_SECONDS) } catch (e) { console.log(v, 'throws') } }
for (const v of ['1.5', '0']) { try { console.log('grace', v, parseConfig({ JACKDAW_RECOVERY_GRACE_MS: v }).JACKDAW_RECOVERY_GRACE_MS) } catch (e) { console.log(v, 'throws') } }
