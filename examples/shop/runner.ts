/**
 * The shop's tests run under Vitest (`npx vitest run examples/shop`) and under Node's own runner
 * (`node --import tsx --test examples/shop/shop.test.ts`): each names its hooks its own way.
 */
const vitest = process.env.VITEST ? await import('vitest') : undefined
const nodeTest = vitest ? undefined : await import('node:test')

type Body = () => void | Promise<void>

export const describe: (name: string, body: () => void) => void = vitest ? vitest.describe : nodeTest!.describe
export const it: (name: string, body: Body) => void = vitest ? vitest.it : nodeTest!.it
export const before: (body: Body) => void = vitest ? vitest.beforeAll : nodeTest!.before
export const after: (body: Body) => void = vitest ? vitest.afterAll : nodeTest!.after
