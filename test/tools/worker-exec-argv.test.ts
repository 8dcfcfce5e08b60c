import { describe, expect, it } from 'vitest'
import { workerExecArgv } from '../../src/serve-cluster.js'

describe('the flags of the processes serve --workers starts', () => {
  it('keep the garbage collector on each process thread when the processes fill the cores', () => {
    expect(workerExecArgv(['--import', 'tsx'], 2, 2)).toEqual(['--import', 'tsx', '--single-threaded-gc'])
    expect(workerExecArgv([], 8, 4)).toEqual(['--single-threaded-gc'])
  })

  it('leave the collector its helper threads when there are cores to spare', () => {
    expect(workerExecArgv(['--import', 'tsx'], 1, 2)).toEqual(['--import', 'tsx'])
    expect(workerExecArgv([], 3, 8)).toEqual([])
  })

  it("keep the operator's own choice", () => {
    expect(workerExecArgv(['--no-single-threaded-gc'], 2, 2)).toEqual(['--no-single-threaded-gc'])
    expect(workerExecArgv(['--max-old-space-size=512', '--no-single_threaded_gc'], 2, 2)).toEqual([
      '--max-old-space-size=512',
      '--no-single_threaded_gc',
    ])
    expect(workerExecArgv(['--single-threaded'], 4, 2)).toEqual(['--single-threaded'])
  })
})
