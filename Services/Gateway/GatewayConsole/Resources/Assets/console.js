const base = document.body.dataset.base || "";
const required = "This field is required.";
let rulesByKey = new Map();

// A server pattern as a JavaScript one: a whole-string match; a leading (?s) becomes the s flag. A pattern
// JavaScript cannot compile is left to the server.
function compile(rule) {
  let source = rule.pattern;
  let flags = "u";
  if (source.startsWith("(?s)")) { source = source.slice(4); flags += "s"; }
  try { return new RegExp("^(?:" + source + ")$", flags); } catch { return null; }
}

async function loadRules() {
  try {
    const response = await fetch("/v1/schema", { headers: { accept: "application/json" }, credentials: "omit" });
    if (!response.ok) { return; }
    const schema = await response.json();
    for (const key of schema.keys || []) {
      rulesByKey.set(key.identifier, (key.rules || []).map((rule) => ({ regex: compile(rule), message: rule.message, maxLength: rule.maxLength })));
    }
  } catch {
    rulesByKey = new Map();
  }
}

function fieldOf(input) {
  return input.closest(".field");
}

function errorIdOf(input) {
  const field = fieldOf(input);
  const list = field && field.dataset.list;
  if (list) { return "error-" + list; }
  if (input.name.includes("[")) { return "error-" + input.name.slice(0, input.name.indexOf("[")); }
  return "error-" + input.name;
}

// `changed`: the user edited the input, so even the server's message about its old value goes.
function showError(input, message, changed = false) {
  const id = errorIdOf(input);
  let paragraph = document.getElementById(id);
  if (message) {
    if (!paragraph) {
      paragraph = document.createElement("p");
      paragraph.className = "field-error";
      paragraph.id = id;
      const field = fieldOf(input);
      const add = field && field.querySelector("button.add");
      if (add) { field.insertBefore(paragraph, add.nextSibling); }
      else if (field) { field.appendChild(paragraph); }
      else { input.insertAdjacentElement("afterend", paragraph); }
    }
    paragraph.textContent = message;
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", id);
  } else {
    input.removeAttribute("aria-invalid");
    if (paragraph && (changed || paragraph.dataset.client === "true")) { paragraph.remove(); }
  }
  if (paragraph && message) { paragraph.dataset.client = "true"; }
}

function problemOf(input) {
  const value = input.value;
  if (input.type === "checkbox") {
    return input.getAttribute("aria-required") === "true" && !input.checked ? required : null;
  }
  if (value === "") {
    return input.getAttribute("aria-required") === "true" ? required : null;
  }
  if (input.type === "number" && Number.isNaN(Number(value))) { return "Enter a number."; }
  const rules = rulesByKey.get(input.dataset.key) || [];
  const length = new TextEncoder().encode(value).length;
  for (const rule of rules) {
    if ((rule.maxLength && length > rule.maxLength) || (rule.regex && !rule.regex.test(value))) { return rule.message; }
  }
  return null;
}

function validate(form) {
  let first = null;
  for (const input of form.querySelectorAll("input:not([type=hidden]), select")) {
    const problem = problemOf(input);
    showError(input, problem);
    if (problem && !first) { first = input; }
  }
  // A required name is one fieldset of optional parts: it is missing when every part is empty (said beside it).
  for (const name of form.querySelectorAll("fieldset.name[data-required=true]")) {
    const parts = Array.from(name.querySelectorAll("input"));
    if (parts.length > 0 && parts.every((input) => input.value.trim() === "")) {
      showError(parts[0], required);
      if (!first) { first = parts[0]; }
    }
  }
  if (first) { first.focus(); }
  return first === null;
}

function growList(button) {
  const key = button.dataset.add;
  const list = document.getElementById("list-" + key);
  const items = list.querySelectorAll(".item");
  const index = items.length;
  const template = items[items.length - 1];
  const item = template.cloneNode(true);
  const input = item.querySelector("input");
  const label = item.querySelector("label");
  input.id = "field-" + key + "-" + index;
  input.value = "";
  input.removeAttribute("aria-invalid");
  label.htmlFor = input.id;
  label.textContent = (list.dataset.label || key) + " " + (index + 1);
  list.insertBefore(item, button);
  input.focus();
}

for (const button of document.querySelectorAll("button.add")) {
  button.hidden = false;
  button.addEventListener("click", () => growList(button));
}

// Passkeys: the form's options go to the browser's WebAuthn API, and its answer back in the form as WebAuthn's
// JSON form (what `credential.toJSON()` gives; written out here for browsers without it). Binary members are
// base64url without padding.
function bytesOf(text) {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/") + "===".slice((text.length + 3) % 4));
  return Uint8Array.from(binary, (character) => character.charCodeAt(0));
}

function textOf(buffer) {
  let binary = "";
  for (const byte of new Uint8Array(buffer)) { binary += String.fromCharCode(byte); }
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

function descriptors(list) {
  return (list || []).map((descriptor) => ({ ...descriptor, id: bytesOf(descriptor.id) }));
}

async function passkey(form) {
  const options = JSON.parse(form.dataset.options);
  const error = document.getElementById(form.id + "-error");
  error.hidden = true;
  let answer;
  try {
    if (form.dataset.passkey === "create") {
      const credential = await navigator.credentials.create({ publicKey: {
        ...options, challenge: bytesOf(options.challenge), user: { ...options.user, id: bytesOf(options.user.id) },
        excludeCredentials: descriptors(options.excludeCredentials),
      } });
      const response = credential.response;
      answer = { id: credential.id, rawId: textOf(credential.rawId), type: credential.type, response: {
        clientDataJSON: textOf(response.clientDataJSON), attestationObject: textOf(response.attestationObject),
        transports: response.getTransports ? response.getTransports() : [],
      } };
    } else {
      const credential = await navigator.credentials.get({ publicKey: {
        ...options, challenge: bytesOf(options.challenge), allowCredentials: descriptors(options.allowCredentials),
      } });
      const response = credential.response;
      answer = { id: credential.id, rawId: textOf(credential.rawId), type: credential.type, response: {
        clientDataJSON: textOf(response.clientDataJSON), authenticatorData: textOf(response.authenticatorData),
        signature: textOf(response.signature), userHandle: response.userHandle ? textOf(response.userHandle) : null,
      } };
    }
  } catch (failure) {
    // Cancelled, timed out, or no passkey for this site: say so, and leave the page as it is.
    error.textContent = failure && failure.name === "NotAllowedError"
      ? "No passkey was used (cancelled, or none for this site)." : "The passkey could not be used here.";
    error.hidden = false;
    return;
  }
  form.querySelector("input[name=credential]").value = JSON.stringify(answer);
  form.submit();
}

if (window.PublicKeyCredential && navigator.credentials) {
  for (const form of document.querySelectorAll("form[data-passkey]")) {
    form.hidden = false;
    form.querySelector("button").addEventListener("click", () => passkey(form));
  }
}

const forms = document.querySelectorAll("form[data-validate]");
if (forms.length > 0) {
  await loadRules();
  for (const form of forms) {
    form.addEventListener("submit", (event) => { if (!validate(form)) { event.preventDefault(); } });
    // Once an input was refused, its message follows each edit as it is typed, so it goes when the value is right.
    // Not on "change", which fires as the field is left: a click on the button leaves it, the message went, the
    // button moved up under the pointer between its press and release, and the click was lost. New messages wait for
    // the submit, for the same reason.
    form.addEventListener("input", (event) => {
      const input = event.target;
      if (input.matches("input:not([type=hidden]), select") && input.getAttribute("aria-invalid") === "true") {
        showError(input, problemOf(input), true);
      }
    });
  }
}