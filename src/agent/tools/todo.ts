/** todo: the task's plan, replaced whole at every call and returned as a checklist. */
import * as z from '../../core/schema';
import { defineTool } from './defineTool';
import { clipOneLine } from './text';

const TODO_MARKS = { completed: '[x]', in_progress: '[~]', pending: '[ ]' } as const;

export const todoTool = defineTool({
  name: 'todo',
  description:
    'Replace the plan for this task with the given list (send the whole list every time). Each item has content and a status: pending, in_progress or completed; at most one item may be in_progress. ' +
    'Mark an item completed as soon as it is done. Returns the plan as a checklist ("- [x]" completed, "- [~]" in progress, "- [ ]" pending).',
  schema: () =>
    z
      .strictObject({
        todos: z.described(
          z.array(
            z.strictObject({
              content: z.described(z.string().check(z.minLength(1)), 'What to do, one short imperative line.'),
              status: z.enum(['pending', 'in_progress', 'completed']),
            }),
          ),
          'The whole plan, in order.',
        ),
      })
      .check(
        z.superRefine((input, context) => {
          const active = input.todos.flatMap((todo, i) => (todo.status === 'in_progress' ? [i + 1] : []));
          if (active.length > 1) {
            context.addIssue({
              code: 'custom',
              path: ['todos'],
              message: `Field "todos" may have at most one item in_progress, but items ${active.join(', ')} are in_progress.`,
            });
          }
        }),
      ),
  run: async (input) => {
    if (input.todos.length === 0) return { isError: false, output: 'Plan cleared (no items).' };
    const done = input.todos.filter((todo) => todo.status === 'completed').length;
    const items = input.todos.map((todo) => `- ${TODO_MARKS[todo.status]} ${clipOneLine(todo.content, 500)}`);
    return { isError: false, output: `Plan (${done}/${input.todos.length} completed):\n${items.join('\n')}` };
  },
});
