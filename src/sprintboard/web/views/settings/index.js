// A project's settings (`/projects/{id}/settings`, contract §17, §22): its statuses, its
// transition rules and its workspace's custom fields. The API decides who may change them: a refusal (403) is said, not hidden.

import * as api from "../../api.js";
import { fill, h, say } from "../../lib/dom.js";
import { redraw } from "../../lib/forms.js";
import { fieldsPath } from "../../lib/project.js";
import { loadWorkflow } from "../../lib/statuses.js";
import * as fieldsPart from "./fields.js";
import * as rulesPart from "./rules.js";
import * as statusesPart from "./statuses.js";

/** The shell hands it `projectId` and `setNav`. */
export async function mount(root, { projectId, setNav }) {
  const { data: project } = await api.get(`/projects/${encodeURIComponent(projectId)}`);
  setNav(project);
  const statuses = h("section", { class: "settings-section", "aria-labelledby": "statuses-title" });
  const rules = h("section", { class: "settings-section", "aria-labelledby": "rules-title" });
  const fields = h("section", { class: "settings-section", "aria-labelledby": "fields-title" });
  fill(root, h("div", { class: "settings" }, h("h1", {}, `${project.name} settings`), statuses, rules, fields));

  /**
   * Run `change()` (requests), then read the workflow again and draw it, saying `done`; a
   * refusal is said and nothing is drawn again, and a change that answers `false` was not
   * made (it asked something first). Answers whether the change was made.
   */
  async function apply(change, done) {
    try {
      if ((await change()) === false) return false;
    } catch (error) {
      say(api.describe(error), { error: true });
      return false;
    }
    await refresh();
    if (done) say(done);
    return true;
  }

  // Changes made back to back each read the settings again: only the read begun last draws
  // (an earlier one answering later would draw the state before the later change), and a
  // drawing keeps what is being typed in it.
  let reads = 0;
  async function refresh() {
    const mine = ++reads;
    const [workflow, fieldList] = await Promise.all([
      loadWorkflow(project.$id),
      api.get(fieldsPath(project.workspaceId)),
    ]);
    if (mine !== reads) return;
    const props = { project, workflow, apply, fields: fieldList.data.documents };
    for (const [section, part] of [[statuses, statusesPart], [rules, rulesPart], [fields, fieldsPart]]) {
      redraw(section, () => part.render(section, props));
    }
  }

  await refresh();
  return null;
}
