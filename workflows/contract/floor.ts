import { defineUpdate } from '@temporalio/workflow';

/**
 * The floor of a submit (issue 13): the smallest workflow of the same shape. Started with Update-With-Start like a
 * payment, its `answer` update returns after one local activity. `npm run bench` measures it beside the submit so
 * the product's cost is read as a ratio to what Temporal itself needs.
 */
export const floorAnswerUpdate = defineUpdate<number>('answer');
