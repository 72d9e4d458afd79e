import { expect } from 'chai'
import { schemaText, ToolRanker } from '../src/modes/ranker'
import { splitIdentifiers, tokenize, unigramPrefix } from '../src/modes/tokenize'
import { chineseQueries, chineseTools, englishQueries, englishTools } from './fixtures/search-corpus'

const words = (text: string) => tokenize(text).filter((term) => !term.startsWith(unigramPrefix))

describe('tool ranker', () => {
  describe('tokeniser', () => {
    it('splits snake, kebab, dotted and camel case identifiers', () => {
      expect(splitIdentifiers('getHTTPResponse_v2')).to.equal('get HTTP Response_v 2')
      expect(tokenize('mcp__github__create_issue')).to.deep.equal(['mcp', 'github', 'creat', 'issu'])
      expect(tokenize('getWeather get-weather triangle_properties.get')).to.deep.equal(['weather', 'weather', 'triangl', 'properti'])
      expect(tokenize('PDF_Exporter')).to.deep.equal(['pdf', 'export'])
    })

    it('drops English stop words and stems with Porter2', () => {
      expect(tokenize('Can you please book the hotels for me?')).to.deep.equal(['book', 'hotel'])
      expect(tokenize('booking booked books')).to.deep.equal(['book', 'book', 'book'])
    })

    it('cuts Chinese into segmenter words and bigrams, with single characters marked as unigrams', () => {
      // Node's full ICU is needed for Intl.Segmenter to know Chinese words.
      expect(words('查询天气')).to.include.members(['查询', '天气', '询天'])
      expect(tokenize('歌')).to.deep.equal([unigramPrefix + '歌'])
      // Particles and filler are dropped; bigrams across a particle too.
      expect(words('帮我查一下的天气')).not.to.include.members(['帮我', '一下', '的天'])
    })

    it('returns no terms for punctuation and stop words only', () => {
      expect(tokenize('?!，。')).to.deep.equal([])
      expect(tokenize('the of and')).to.deep.equal([])
      expect(tokenize('')).to.deep.equal([])
    })
  })

  it('collects parameter names, descriptions and enum values, nested and in arrays', () => {
    expect(schemaText({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        unit: { enum: ['celsius', 'fahrenheit', 3] },
        stops: { type: 'array', items: { type: 'object', properties: { station: { description: 'Station code' } } } },
      },
    })).to.deep.equal(['city', 'City name', 'unit', 'celsius', 'fahrenheit', 'stops', 'station', 'Station code'])
    expect(schemaText(null)).to.deep.equal([])
  })

  describe('puts the expected tool first', () => {
    const chinese = new ToolRanker(chineseTools)
    for (const { query, gold } of chineseQueries) {
      it(`Chinese: ${query} → ${gold}`, () => {
        expect(chineseTools[chinese.rank(query, { limit: 1 })[0]?.index]?.name).to.equal(gold)
      })
    }
    const english = new ToolRanker(englishTools)
    for (const { query, gold } of englishQueries) {
      it(`English: ${query} → ${gold}`, () => {
        expect(englishTools[english.rank(query, { limit: 1 })[0]?.index]?.name).to.equal(gold)
      })
    }
  })

  it('ranks best first with ties in index order, honours limit and accept, and skips tools without a shared term', () => {
    const ranker = new ToolRanker([
      { name: 'alpha', description: 'send a message' },
      { name: 'beta', description: 'send a message' },
      { name: 'gamma', description: 'messages, message' },
      { name: 'delta', description: 'unrelated' },
    ])
    const names = (hits: { index: number }[]) => hits.map((hit) => ['alpha', 'beta', 'gamma', 'delta'][hit.index])
    expect(names(ranker.rank('message'))).to.deep.equal(['gamma', 'alpha', 'beta'])
    expect(names(ranker.rank('message', { limit: 2 }))).to.deep.equal(['gamma', 'alpha'])
    expect(names(ranker.rank('message', { accept: (index) => index !== 2 }))).to.deep.equal(['alpha', 'beta'])
    expect(ranker.rank('nothing here matches')).to.deep.equal([])
    expect(ranker.rank('')).to.deep.equal([])
  })

  it('does not let a plain word win by being a tool name, but an identifier does', () => {
    const ranker = new ToolRanker([
      { name: 'Now', description: 'Trending topics right now on social media.' },
      { name: 'clock', description: 'Tell the current time now.' },
    ])
    expect(ranker.rank('what time is it now')[0].index).to.equal(1)
    expect(ranker.rank('use the clock tool')[0].index).to.equal(1)
    const exact = new ToolRanker([{ name: 'mcp__x__now_playing', description: 'Current song.' }, { name: 'now', description: 'Now playing music.' }])
    expect(exact.rank('now_playing')[0].index).to.equal(0)
  })
})
