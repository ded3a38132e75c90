/** The floor workflow's one step: nothing but the round trip of a local activity (see workflows/floor). */
export function createFloorActivities() {
  return {
    async floorStep(): Promise<number> {
      return Date.now();
    },
  };
}
