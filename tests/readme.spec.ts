import { expect } from 'chai'
import { mkdir, readFile, writeFile } from 'fs/promises'
import { join, resolve } from 'path'
import * as ts from 'typescript'
import { Context, Service } from 'koishi'
import { createApp, TestApp } from './helpers/app'

// The README's "Define a tool" example is what plugin authors copy: it must
// type-check under strict settings and work as written.

const root = resolve(__dirname, '..')
const outDir = join(root, 'tests/output/readme')

async function readmeExample() {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Define a tool'))
  const match = /```ts\n([\s\S]*?)```/.exec(section)
  if (!match) throw new Error('README has no TypeScript block under "Define a tool"')
  return match[1]
}

/** A stand-in for `ctx.http` that answers wttr.in's JSON for any city and records the requests. */
class FakeHttp extends Service {
  requests: string[] = []
  constructor(ctx: Context) {
    super(ctx, 'http', true)
  }

  async get(url: string) {
    this.requests.push(url)
    return { current_condition: [{ temp_C: '21', temp_F: '70' }] }
  }
}

describe('README: the "Define a tool" example', function () {
  this.timeout(60000)
  let file: string

  before(async () => {
    await mkdir(outDir, { recursive: true })
    file = join(outDir, 'weather.ts')
    // Imported by package name in the README; here the package is this checkout.
    await writeFile(file, (await readmeExample()).replace(`from 'koishi-plugin-chatluna-tools'`, `from '${join(root, 'src')}'`))
  })

  it('type-checks with strict settings', () => {
    const program = ts.createProgram([file], {
      strict: true,
      strictFunctionTypes: false,
      strictBindCallApply: false,
      noEmit: true,
      skipLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      types: ['node'],
    })
    const diagnostics = ts.getPreEmitDiagnostics(program).filter((item) => item.file?.fileName === file)
    expect(diagnostics.map((item) => ts.flattenDiagnosticMessageText(item.messageText, '\n'))).to.deep.equal([])
  })

  describe('as a plugin', () => {
    let test: TestApp
    beforeEach(async () => {
      test = await createApp({}, { database: true, locale: 'en-US' })
      test.app.plugin(FakeHttp)
      test.app.plugin(require(file))
      await test.app.mock.initUser('alice', 1)
    })
    afterEach(() => test.dispose())

    it('defines get_weather and answers the weather command through the pipeline', async () => {
      expect(test.app.tools.get('get_weather')?.source).to.equal('plugin')
      const client = test.app.mock.client('alice')
      await client.shouldReply('weather Paris', 'Paris: 21 °C')
      const result = await test.app.tools.call({ name: 'get_weather', args: { city: 'Oslo', unit: 'fahrenheit' } })
      expect(result.content).to.deep.equal([{ type: 'text', text: 'Oslo: 70 °F' }])
      const http = test.app.registry.get(FakeHttp as any)?.ctx.http as unknown as FakeHttp
      expect(http.requests).to.deep.equal([
        'https://wttr.in/Paris?format=j1',
        'https://wttr.in/Oslo?format=j1',
      ])
    })

    it('replies to bad input in the user\'s language, not with model text only', async () => {
      const client = test.app.mock.client('alice')
      const [reply] = await client.receive('weather')
      expect(reply).to.match(/^\[invalid call\] /)
    })
  })
})
