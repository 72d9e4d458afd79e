import { expect } from 'chai'
import { mkdir, writeFile } from 'fs/promises'
import { join } from 'path'
import { Schema } from 'koishi'
import { createApp, TestApp } from './helpers/app'

for (const locale of ['en-US', 'zh-CN'] as const) {
  const en = locale === 'en-US'

  describe(`chat commands (${locale})`, () => {
    let test: TestApp
    beforeEach(async () => {
      test = await createApp({ workDir: 'workspace' }, { database: true, locale })
      await mkdir(join(test.baseDir, 'workspace'), { recursive: true })
      await writeFile(join(test.baseDir, 'workspace/notes.txt'), Array.from({ length: 30 }, (_, i) => `note ${i + 1}`).join('\n'))
      await test.app.mock.initUser('admin', 3)
      await test.app.mock.initUser('member', 1)
    })
    afterEach(() => test.dispose())

    it('tools lists what this session can see, one line each', async () => {
      test.app.tools.define({ name: 'clock', description: 'Tell the time.\nMore text.', traits: { effect: 'read' }, run: () => 'noon' })
      const client = test.app.mock.client('member')
      await client.shouldReply('tools', en
        ? [
          'Tools available here (6):',
          'bash — Run a shell command line in the workspace and get its output, exit code and dur…',
          'clock — Tell the time.',
          'edit — Change part of a text file in the workspace; the previous content is backed up …',
          'read — Read files, search text and list directories in the workspace. operation "file"…',
          'skill — Load a skill: instructions for a specialised task, and files in its base direct…',
          'write — Create, overwrite or append to a text file in the workspace. operation "create"…',
        ].join('\n')
        : [
          '当前会话可用的工具（6 个）：',
          'bash — 在工作区中执行一行 shell 命令，返回输出、退出码和耗时。支持管道、&&、; 和重定向。过长的输出只显示开头和结尾，完整内容保存到可读取的文件。执行前会按…',
          'clock — Tell the time.',
          'edit — 修改工作区中文本文件的一部分，修改前会先备份原内容。operation 为 "line" 时用 content 替换 line_from 到 line_to …',
          'read — 读取工作区中的文件、搜索文本、列出目录。operation 为 "file"（默认）时返回文本文件带行号的内容，长文件可用 line_from/line_to…',
          'skill — 加载一个技能：某类专门任务的操作说明，以及其基础目录中的文件。在执行下列技能所涵盖的任务之前，先以技能名调用本工具，并按返回的说明去做。',
          'write — 在工作区中创建、覆盖或追加文本文件。operation 为 "create"（默认）时文件已存在则失败，"overwrite" 整体替换，"append" 先…',
        ].join('\n'))
    })

    it('tools.call read replies with the first lines of a workspace file for an authority-3 user', async () => {
      const client = test.app.mock.client('admin')
      const [reply] = await client.receive('tools.call read {"path":"notes.txt","line_to":3}')
      expect(reply).to.equal('1\tnote 1\n2\tnote 2\n3\tnote 3\n\n[showing lines 1-3 of 30; call read with line_from=4 to continue]')
    })

    it('tools.call refuses a user below the configured authority', async () => {
      const client = test.app.mock.client('member')
      await client.shouldReply('tools.call read {"path":"notes.txt"}', en
        ? 'tools.call needs authority 3; you have 1.'
        : 'tools.call 需要权限等级 3，你的等级为 1。')
    })

    it('tools.call reports failures with a localized status', async () => {
      const client = test.app.mock.client('admin')
      const [reply] = await client.receive('tools.call read {"path": "READ')
      expect(reply.startsWith(en ? '[invalid call] The arguments are not valid JSON: ' : '[调用无效] 参数不是有效的 JSON：')).to.equal(true)
      const [outside] = await client.receive('tools.call read {"path":"../koishi.yml"}')
      expect(outside).to.equal(en
        ? '[denied] The path "../koishi.yml" is outside the work directory (through "..", an absolute path or a symbolic link). Use a path inside it.'
        : '[已拒绝] 路径“../koishi.yml”在工作目录之外（经由 ..、绝对路径或符号链接）。请使用工作目录内的路径。')
      expect(await client.receive('tools.call read {"path":7}')).to.deep.equal([en
        ? '[invalid call] The arguments do not match the tool\'s schema: path: expected string, got number 7'
        : '[调用无效] 参数与工具的参数定义不符：path：应为 string，实际为 number 7'])
      const [unknown] = await client.receive('tools.call read {"path":"notes.txt","offset":5}')
      expect(unknown).to.match(en
        ? /^\[invalid call\] The arguments do not match the tool's schema: "offset" is not a property of this tool \(it takes: operation, path, .*\)$/
        : /^\[调用无效\] 参数与工具的参数定义不符：“offset”不是此工具的参数（可用参数：operation, path, .*）$/)
      expect(await client.receive('tools.call read {}')).to.deep.equal([en
        ? '[invalid call] The arguments do not match the tool\'s schema: the required property "path" is missing'
        : '[调用无效] 参数与工具的参数定义不符：缺少必填参数“path”'])
      expect(await client.receive('tools.call raed {"path":"notes.txt"}')).to.deep.equal([en
        ? '[invalid call] There is no tool named "raed". Did you mean: read, bash, edit, write, skill?'
        : '[调用无效] 没有名为“raed”的工具。你是否想用：read, bash, edit, write, skill？'])
    })

    it('tools.call uses the tool render when present', async () => {
      test.app.tools.define({
        name: 'weather',
        description: 'Weather.',
        args: Schema.object({ city: Schema.string().required() }),
        traits: { effect: 'read' },
        run: (args) => `sunny in ${args.city}`,
        render: { result: (args, result) => ({ title: `Weather for ${args.city}`, text: (result.content[0] as any).text }) },
      })
      const client = test.app.mock.client('admin')
      await client.shouldReply('tools.call weather {"city":"Paris"}', 'Weather for Paris\nsunny in Paris')
    })

    it('tools.info shows schema, traits, source and the explanation when hidden', async () => {
      const client = test.app.mock.client('member')
      const [reply] = await client.receive('tools.info read')
      expect(reply).to.contain(en ? 'Tool read (source: builtin, plugin: chatluna-tools)' : '工具 read（来源：builtin，插件：chatluna-tools）')
      expect(reply).to.contain(en ? 'Effect: read · parallel: true · timeout: 180000 ms' : '副作用：read · 可并行：true · 超时：180000 毫秒')
      expect(reply).to.contain('"required": [\n    "path"\n  ]')
      expect(reply).to.contain(en
        ? 'The tool "read" is visible here: it passes all five visibility layers.'
        : '工具 "read" 在此可见：它通过了全部五层可见性筛选。')
      test.app.tools.setOwnerEnabled({ kind: 'skill', id: 'x' }, false)
      test.app.tools.define({ name: 'skilled', description: 'x', owner: { kind: 'skill', id: 'x' }, run: () => '' })
      const [hidden] = await client.receive('tools.info skilled')
      expect(hidden).to.contain(en
        ? 'The skill "x" that provides this tool is disabled.'
        : '提供此工具的技能 "x" 已停用。')
    })

    it('tools.info on an unknown name says it is not registered', async () => {
      const client = test.app.mock.client('member')
      await client.shouldReply('tools.info raed', en
        ? 'No plugin has registered a tool named "raed", so the model cannot see it.\nRegistered tools with similar names: read, bash, edit.'
        : '没有插件注册名为 "raed" 的工具，所以模型看不到它。\n名字相近的已注册工具：read, bash, edit。')
    })
  })
}

describe('chat commands without a database', () => {
  let test: TestApp
  beforeEach(async () => test = await createApp({ callAuthority: 0 }))
  afterEach(() => test.dispose())

  it('treats a user without a record as authority 0: write tools are denied', async () => {
    test.app.tools.define({ name: 'save', description: 'Saves.', traits: { effect: 'write' }, run: () => 'saved' })
    const client = test.app.mock.client('stranger')
    const [reply] = await client.receive('tools.call save')
    expect(reply).to.equal('[已拒绝] 此处的权限模式为 read-only（权限等级 0）：不允许写入类动作。')
  })
})
