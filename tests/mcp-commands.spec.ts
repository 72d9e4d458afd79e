import { expect } from 'chai'
import { createApp, TestApp } from './helpers/app'
import { everythingBin, fixtureBin, stdioServer } from './helpers/mcp'

// The chat commands of the MCP client, in both locales, and the demo's path:
// `tools.mcp` shows server-everything connected and `tools.call
// mcp__everything__echo {"message":"hi"}` answers (issue "MCP", items 6 and acceptance).

for (const locale of ['en-US', 'zh-CN'] as const) {
  const en = locale === 'en-US'

  describe(`MCP chat commands (${locale})`, function () {
    this.timeout(20000)
    let test: TestApp

    before(async () => {
      test = await createApp({
        callAuthority: 3,
        mcp: {
          retryDelay: 60000,
          servers: [
            stdioServer('everything', everythingBin, ['stdio']),
            stdioServer('broken', fixtureBin, ['hang'], { startupTimeout: 200 }),
            stdioServer('spare', fixtureBin, [], { enabled: false }),
          ],
        },
      }, { database: true, locale })
      await test.app.mock.initUser('admin', 4)
      await test.app.mock.initUser('member', 1)
      await test.app.mock.initUser('operator', 3)
      await test.app.tools.mcp.settled()
    })
    after(() => test?.dispose())

    it('tools.mcp shows each server with its state, tool count and last error', async () => {
      const [reply] = await test.app.mock.client('admin').receive('tools.mcp')
      const lines = reply.split('\n')
      expect(lines[0]).to.equal(en ? 'MCP servers (3):' : 'MCP 服务器（3 个）：')
      expect(lines[1]).to.equal(en ? 'everything — connected (stdio) · 13 tools' : 'everything — 已连接（stdio）· 13 个工具')
      expect(lines[2]).to.match(en
        ? /^broken — reconnecting, next attempt in (1m|5\ds) \(failed attempts: 1\) \(stdio\) · 0 tools$/
        : /^broken — 重连中，(1m|5\ds)后再次尝试（已失败 1 次）（stdio）· 0 个工具$/)
      expect(lines[3]).to.equal(en
        ? '  last error: the MCP server "broken" did not answer within the startup timeout of 200 ms'
        : '  最近的错误：the MCP server "broken" did not answer within the startup timeout of 200 ms')
      expect(lines[4]).to.equal(en ? 'spare — disabled (stdio) · 0 tools' : 'spare — 已停用（stdio）· 0 个工具')
    })

    it('tools.mcp needs authority 3, managing needs 4', async () => {
      const low = en ? 'Low authority.' : '权限不足。'
      const [reply] = await test.app.mock.client('member').receive('tools.mcp')
      expect(reply).to.equal(low)
      const operator = test.app.mock.client('operator')
      expect((await operator.receive('tools.mcp'))[0]).to.match(/^MCP/)
      for (const command of ['tools.mcp.test everything', 'tools.mcp.enable spare', 'tools.mcp.disable everything']) {
        expect((await operator.receive(command))[0], command).to.equal(low)
      }
      expect(test.app.tools.mcp.server('everything').state).to.equal('connected')
    })

    it('tools.call mcp__everything__echo answers (the demo path)', async () => {
      const [reply] = await test.app.mock.client('admin').receive('tools.call mcp__everything__echo {"message":"hi"}')
      expect(reply).to.equal('Echo: hi')
    })

    it('tools.mcp.test reports the tools, or the error', async () => {
      const client = test.app.mock.client('admin')
      const [passed] = await client.receive('tools.mcp.test spare')
      const lines = passed.split('\n')
      expect(lines[0]).to.match(en
        ? /^MCP server spare answered in \d+ ms \(stdio, fixture 1\.0\.0\) with 10 tools:$/
        : /^MCP 服务器 spare 在 \d+ 毫秒内应答（stdio，fixture 1\.0\.0），共 10 个工具：$/)
      expect(lines[1].split(', ')).to.include('mcp__spare__get-sum')
      expect(lines[2]).to.equal(en
        ? '  skipped tool_with_dots: its name becomes "mcp__spare__tool_with_dots", the same as the name of tool "tool.with.dots" of this server, which was listed first'
        : '  跳过 tool_with_dots：its name becomes "mcp__spare__tool_with_dots", the same as the name of tool "tool.with.dots" of this server, which was listed first')
      const [failed] = await client.receive('tools.mcp.test broken')
      expect(failed).to.equal(en
        ? 'MCP server broken failed the test: the MCP server "broken" did not answer within the startup timeout of 200 ms'
        : 'MCP 服务器 broken 测试失败：the MCP server "broken" did not answer within the startup timeout of 200 ms')
      const [unknown] = await client.receive('tools.mcp.test nope')
      expect(unknown).to.equal(en
        ? 'There is no MCP server "nope". Configured servers: everything, broken, spare.'
        : '没有名为“nope”的 MCP 服务器。已配置的服务器：everything, broken, spare。')
      const [missing] = await client.receive('tools.mcp.test')
      expect(missing).to.equal(en ? 'Please give a server id, e.g. "tools.mcp.test everything".' : '请提供服务器 ID，例如“tools.mcp.test everything”。')
    })

    it('tools.mcp.disable hides the tools; tools.mcp.enable brings them back', async () => {
      const client = test.app.mock.client('admin')
      const [disabled] = await client.receive('tools.mcp.disable everything')
      expect(disabled).to.equal(en
        ? 'MCP server everything is disabled: its 13 tools are hidden and it is disconnected. Until the plugin restarts, this overrides the config.'
        : 'MCP 服务器 everything 已停用：其 13 个工具已隐藏，连接已断开。在插件重启之前，此设置优先于配置。')
      const [call] = await client.receive('tools.call mcp__everything__echo {"message":"hi"}')
      expect(call).to.equal(en
        ? '[denied] The tool "mcp__everything__echo" is not available in this conversation.'
        : '[已拒绝] 工具“mcp__everything__echo”在当前会话中不可用。')
      const [info] = await client.receive('tools.info mcp__everything__echo')
      expect(info).to.include(en ? 'The MCP server "everything" that provides this tool is disabled.' : 'everything')
      const [enabled] = await client.receive('tools.mcp.enable everything')
      expect(enabled).to.equal(en
        ? 'MCP server everything is enabled. Until the plugin restarts, this overrides the config.\neverything — connected (stdio) · 13 tools'
        : 'MCP 服务器 everything 已启用。在插件重启之前，此设置优先于配置。\neverything — 已连接（stdio）· 13 个工具')
      const [again] = await client.receive('tools.call mcp__everything__echo {"message":"again"}')
      expect(again).to.equal('Echo: again')
    })
  })
}
