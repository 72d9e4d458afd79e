import { expect } from 'chai'
import { cp, mkdir, readFile, rm, utimes, writeFile } from 'fs/promises'
import { existsSync } from 'fs'
import { join, resolve } from 'path'
import { Dict } from 'koishi'
import { createApp, TestApp } from './helpers/app'
import { resultText } from '../src/pipeline/result'
import { listSkillFiles, loadSkillDirectory } from '../src/skills'
import { settles, sleep } from './helpers/wait'

const skillFile = (name: string, description: string, body = `# ${name}\n\nSteps of ${name}.\n`, extra = '') =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n${body}`

describe('skills', () => {
  let test: TestApp
  let work: string
  let global: string
  const open = async (skills: Dict = {}, options: Dict = {}) => {
    test = await createApp({ workDir: 'work', skills: { globalDirs: ['global-skills'], ...skills } }, options)
    work = join(test.baseDir, 'work')
    global = join(test.baseDir, 'global-skills')
  }
  const put = async (dir: string, folder: string, text: string) => {
    await mkdir(join(dir, folder), { recursive: true })
    await writeFile(join(dir, folder, 'SKILL.md'), text)
  }
  afterEach(() => test?.dispose())

  const skill = (name: string, scope = {}) => test.app.tools.call({ name: 'skill', args: { skill: name }, scope })

  describe('loading', () => {
    beforeEach(async () => {
      await open()
      await put(join(work, 'skills'), 'deploy', skillFile('deploy', 'Deploy the site (local).', undefined, 'version: 2\ntags: [ops, web]\n'))
      await put(global, 'deploy', skillFile('deploy', 'Deploy the site (global).'))
      await put(global, 'review', skillFile('review', 'Review a pull request.'))
      await test.app.tools.skills.refresh()
    })

    it('lists local and global skills, local winning, extra frontmatter fields kept', () => {
      const skills = test.app.tools.skills.list()
      expect(skills.map((item) => [item.name, item.scope, item.description, item.enabled])).to.deep.equal([
        ['deploy', 'local', 'Deploy the site (local).', true],
        ['review', 'global', 'Review a pull request.', true],
      ])
      expect(skills[0].data).to.deep.equal({ name: 'deploy', description: 'Deploy the site (local).', version: 2, tags: ['ops', 'web'] })
      expect(skills[0].dir).to.equal(join(work, 'skills/deploy'))
    })

    it('explains which skill wins and which one is shadowed', () => {
      const explanation = test.app.tools.skills.explain('deploy')
      expect(explanation.active.scope).to.equal('local')
      expect(explanation.shadowed.map((item) => [item.scope, item.file])).to.deep.equal([['global', join(global, 'deploy/SKILL.md')]])
      expect(test.app.tools.skills.explain('review').shadowed).to.deep.equal([])
      expect(test.app.tools.skills.explain('nothing')).to.deep.include({ active: undefined, shadowed: [] })
    })

    it('returns the body and base directory through the skill tool', async () => {
      const result = await skill('deploy')
      expect(resultText(result)).to.equal([
        `Skill "deploy" (base directory: ${join(work, 'skills/deploy')})`,
        'Relative paths in these instructions are relative to the base directory.',
        '',
        '# deploy\n\nSteps of deploy.',
      ].join('\n'))
      expect((await skill('Review')).ok).to.equal(true)
      const unknown = await skill('deplyo')
      expect(unknown.error).to.include({ code: 'unknown-skill', message: 'There is no skill named "deplyo".' })
      expect(unknown.error.hint).to.match(/^Available skills: deploy, review\.$/)
    })

    it('builds a catalog for the system prompt, in both locales, and puts it in the tool description', () => {
      expect(test.app.tools.skills.catalog('en-US')).to.equal([
        'Skills available through the skill tool (call it with a skill\'s name to load its instructions):',
        '- deploy: Deploy the site (local).',
        '- review: Review a pull request.',
      ].join('\n'))
      expect(test.app.tools.skills.catalog('zh-CN').split('\n')[0]).to.equal('可通过 skill 工具使用的技能（以技能名调用即可加载其说明）：')
      const [declaration] = test.app.tools.declarations({ locale: 'en-US', tools: { include: ['skill'] } })
      expect(declaration.function.description).to.match(/^Load a skill: .*\n\nSkills available through the skill tool .*\n- deploy: Deploy the site \(local\)\.\n- review: Review a pull request\.$/s)
    })

    it('switches a skill off one by one: gone from the catalog and refused by the tool', async () => {
      test.app.tools.skills.setEnabled('review', false)
      expect(test.app.tools.skills.catalog('en-US')).not.to.contain('review')
      expect(test.app.tools.skills.list().find((item) => item.name === 'review').enabled).to.equal(false)
      const refused = await skill('review')
      expect(refused).to.include({ ok: false, status: 'denied' })
      expect(refused.error).to.include({ code: 'skill-disabled', message: 'The skill "review" is disabled.' })
      // The owner state is visibility layer 5, shared with tools owned by the skill.
      expect(test.app.tools.owners.isEnabled({ kind: 'skill', id: 'review' })).to.equal(false)
      test.app.tools.skills.setEnabled('review', true)
      expect((await skill('review')).ok).to.equal(true)
    })
  })

  it('starts with the skills listed in skills.disabled switched off', async () => {
    await open({ disabled: ['secret'] })
    await put(join(work, 'skills'), 'secret', skillFile('secret', 'Hidden.'))
    expect((await skill('secret')).error.code).to.equal('skill-disabled')
    expect(test.app.tools.skills.catalog()).to.equal('No skills are available yet.')
  })

  it('skips malformed skills with a reason and loads the rest of the directory', async () => {
    await open()
    const dir = join(work, 'skills')
    const pwned = join(test.baseDir, 'pwned')
    await put(dir, 'bad-yaml', '---\nname: [unclosed\n---\nbody')
    await put(dir, 'no-description', '---\nname: no-description\n---\nbody')
    await put(dir, 'bad-name', skillFile('has space', 'x'))
    await put(dir, 'javascript', `---js\n{ name: 'javascript', description: require('fs').writeFileSync(${JSON.stringify(pwned)}, 'x') || 'ran' }\n---\nbody`)
    await put(dir, 'good', skillFile('good', 'Fine.'))
    await put(dir, 'folder-name', '---\ndescription: Named after its folder.\n---\nbody')
    await test.app.tools.skills.refresh()
    expect(test.app.tools.skills.list().map((item) => item.name)).to.deep.equal(['folder-name', 'good'])
    const warnings = test.app.tools.skills.warnings().map((warning) => [warning.file.split('/').slice(-2, -1)[0], warning.reason])
    expect(warnings.map(([folder]) => folder)).to.deep.equal(['bad-name', 'bad-yaml', 'javascript', 'no-description'])
    expect(warnings.find(([folder]) => folder === 'javascript')[1]).to.equal('only YAML or JSON frontmatter is accepted')
    expect(warnings.find(([folder]) => folder === 'no-description')[1]).to.equal('the frontmatter has no description')
    // gray-matter would eval JavaScript frontmatter in the bot's process: it was refused, not run.
    expect(existsSync(pwned)).to.equal(false)
  })

  it('fingerprints each directory so an unchanged one is not parsed again', async () => {
    await open()
    const dir = join(work, 'skills')
    await put(dir, 'a', skillFile('a', 'First.'))
    const first = await loadSkillDirectory(dir, 'local')
    expect(await loadSkillDirectory(dir, 'local', first)).to.equal(first)
    expect(await test.app.tools.skills.refresh()).to.equal(true)
    expect(await test.app.tools.skills.refresh()).to.equal(false)
    const before = (await listSkillFiles(dir)).fingerprint
    const later = new Date(Date.now() + 5000)
    await utimes(join(dir, 'a/SKILL.md'), later, later)
    expect((await listSkillFiles(dir)).fingerprint).not.to.equal(before)
    const second = await loadSkillDirectory(dir, 'local', first)
    expect(second).not.to.equal(first)
    expect(second.skills.map((item) => item.description)).to.deep.equal(['First.'])
  })

  it('hot-reloads a skill the agent writes into the workspace skills folder, without restart', async function () {
    this.timeout(10000)
    await open()
    expect(existsSync(join(work, 'skills'))).to.equal(false)
    await sleep(100)
    const write = await test.app.tools.call({
      name: 'write',
      args: { path: 'skills/learned/SKILL.md', content: skillFile('learned', 'A skill the agent learned.') },
      scope: { authority: 5 },
    })
    expect(write.ok).to.equal(true)
    // The watcher picks it up: no refresh call, no restart.
    expect(await settles(() => !!test.app.tools.skills.get('learned'))).to.equal(true)
    expect(test.app.tools.skills.catalog('en-US')).to.contain('- learned: A skill the agent learned.')
    await writeFile(join(work, 'skills/learned/SKILL.md'), skillFile('learned', 'Changed description.'))
    expect(await settles(() => test.app.tools.skills.get('learned')?.description === 'Changed description.')).to.equal(true)
    await rm(join(work, 'skills/learned'), { recursive: true })
    expect(await settles(() => !test.app.tools.skills.get('learned'))).to.equal(true)
  })

  it('describes the skill tool in Chinese with useChinese', async () => {
    await open({ useChinese: true })
    const [declaration] = test.app.tools.declarations({ locale: 'en-US', tools: { include: ['skill'] } })
    expect(declaration.function.description).to.match(/^加载一个技能/)
    expect(declaration.function.description).to.contain('暂无可用的技能。')
  })

  for (const locale of ['en-US', 'zh-CN']) {
    it(`serves the demo skills through tools.call in chat (${locale})`, async () => {
      await open({}, { database: true, locale })
      await cp(resolve(__dirname, '../scripts/demo/skills'), join(work, 'skills'), { recursive: true })
      await test.app.mock.initUser('admin', 3)
      const client = test.app.mock.client('admin')
      const [reply] = await client.receive('tools.call skill {"skill":"todo-triage"}')
      const body = (await readFile(resolve(__dirname, '../scripts/demo/skills/todo-triage/SKILL.md'), 'utf8')).split('---\n')[2].trim()
      expect(reply).to.equal(`Skill "todo-triage" (base directory: ${join(work, 'skills/todo-triage')})\nRelative paths in these instructions are relative to the base directory.\n\n${body}`)
      const [other] = await client.receive('tools.call skill {"skill":"write-a-skill"}')
      expect(other).to.contain('# Writing a new skill')
      const [missing] = await client.receive('tools.call skill {"skill":"nope"}')
      expect(missing).to.equal(locale === 'en-US'
        ? '[error] There is no skill named "nope". Available skills: todo-triage, write-a-skill.'
        : '[出错] 没有名为“nope”的技能。可用的技能：todo-triage, write-a-skill。')
      const [range] = await client.receive('tools.call read {"path":"skills/todo-triage/SKILL.md","line_from":9999}')
      expect(range).to.match(locale === 'en-US'
        ? /^\[invalid call\] The tool reports invalid-range: line_from \(9999\) is past the end of the file \(\d+ lines\)\.$/
        : /^\[调用无效\] 工具报告错误（invalid-range）：line_from \(9999\) is past the end of the file \(\d+ lines\)\.$/)
      await test.app.mock.initUser('owner', 5)
      const [exists] = await test.app.mock.client('owner').receive('tools.call write {"path":"skills/todo-triage/SKILL.md","content":"x"}')
      expect(exists).to.equal(locale === 'en-US'
        ? '[error] "skills/todo-triage/SKILL.md" already exists: use operation overwrite or append to change it.'
        : '[出错] “skills/todo-triage/SKILL.md”已存在：要修改它，请使用 overwrite 或 append 操作。')
    })
  }
})
