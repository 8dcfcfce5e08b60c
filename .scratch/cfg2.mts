import { Type } from 'typebox'
const S = Type.Object({ A: Type.Integer({ minimum: 1 }) })
console.log(JSON.stringify(S.properties.A), (S.properties.A as any).type)
