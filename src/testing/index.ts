/** `agentlanes/testing`: fakes for testing bots built on agentlanes without real time or real models. */
export { fakeClock, type FakeClock, type FakeClockOptions, type RunAllOptions } from '../core/fake-clock.js';
export {
  scriptedModel,
  type ScriptedModel,
  type ScriptedModelOptions,
  type Script,
  type ScriptEntry,
  type ScriptedReply,
  type ScriptedFailure,
  type ScriptedHang,
  type ScriptedToolCall,
  type ScriptedRequest,
} from '../providers/index.js';
