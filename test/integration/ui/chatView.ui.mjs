// The chat view with the scripted fake model: the model picker offers the
// "Fake (tests)" models and selects one, the chat input takes a message, and the
// scripted answer is rendered in the chat list. The message goes to `@fake`, the
// fake model extension's participant, which forwards it to the picked model
// (the default participant needs a Copilot sign-in).
import { modelPicker, openChat, pickModel, responseRendered, sendChatMessage, waitUntil } from '../workbench.mjs';

const ANSWER = 'src/math.js exports add and multiply (scripted answer).';
const QUESTION = 'What does src/math.js export?';

export async function run({ page, log, check, fakeModel }) {
  fakeModel.script([{ text: ANSWER, chunks: 4 }]);

  await openChat(page);
  log('chat view open');
  const current = await waitUntil(
    async () => {
      const label = (await modelPicker(page).innerText()).trim();
      return /^Fake (Large|Small)$/.test(label) ? label : undefined;
    },
    { what: 'the model picker to show a fake model' },
  ).catch(() => undefined);
  check(current !== undefined, `the model picker shows a fake model (${current ?? await modelPicker(page).innerText()})`);
  const picked = await pickModel(page, 'Fake Small').catch(() => false);
  check(picked === true, 'selecting Fake Small ("Fake (tests)") in the picker makes it the current model');

  const message = `@fake ${QUESTION}`;
  await sendChatMessage(page, message);
  check(true, 'the chat input accepts the typed message');
  check(await responseRendered(page, ANSWER), 'the scripted answer of the fake model is rendered in the chat list');

  const requests = fakeModel.requests();
  log(`fake model requests: ${JSON.stringify(requests.map((request) => [request.model, request.messages.map((m) => m.content)]))}`);
  const last = requests.at(-1);
  check(last?.model === 'ck-fake-small', `the request went to the picked model (${last?.model ?? 'no request'})`);
  check(last?.messages.at(-1)?.content === QUESTION, 'the model received the message without the participant name');
}
