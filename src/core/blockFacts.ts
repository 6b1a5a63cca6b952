/**
 * The facts the protected block may ever show, in order of first appearance:
 * kept up to date as each fact version is written (a fact may become one the
 * block shows later), and sorted only when one arrived out of order.
 */
export class BlockFacts {
  /** Each fact's place in the order of first appearance. */
  private readonly orderIndex = new Map<string, number>();
  private readonly ids: string[] = [];
  private readonly shown = new Set<string>();
  private sorted = true;

  /** A version of fact `id` was written; `mayShow`: the block may show that fact from now on. */
  track(id: string, mayShow: boolean): void {
    if (!this.orderIndex.has(id)) this.orderIndex.set(id, this.orderIndex.size);
    if (this.shown.has(id)) return;
    if (!mayShow) return;
    this.shown.add(id);
    if (this.ids.length && this.orderIndex.get(this.ids[this.ids.length - 1]!)! > this.orderIndex.get(id)!) this.sorted = false;
    this.ids.push(id);
  }

  /** Whether the block may show fact `id`. */
  has(id: string): boolean {
    return this.shown.has(id);
  }

  /** The ids of the facts the block may show, in order of first appearance. */
  inOrder(): readonly string[] {
    if (!this.sorted) {
      this.ids.sort((a, b) => this.orderIndex.get(a)! - this.orderIndex.get(b)!);
      this.sorted = true;
    }
    return this.ids;
  }
}
