import GatewayService
import Mustache

/// The console's pages as Mustache templates, compiled into the gateway (no files to ship beside the binary).
///
/// Every value is written with `{{…}}`, which escapes `& < > " '`; the unescaping forms (`{{{…}}}`, `{{&…}}`) are
/// never used (a test checks). Pages extend `layout` (template inheritance), so no HTML is passed around as a value.
enum ConsoleTemplates {
    static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        for (name, text) in all {
            try library.register(text, named: name)
        }
        return library
    }

    /// `page` rendered with `template`; empty if there is no such template.
    static func render(_ page: ConsolePage, template: String, in library: MustacheLibrary) -> String {
        library.render(page, withTemplate: template) ?? ""
    }

    static let all: [(String, String)] = [
        ("layout", layout), ("messages", messages), ("field", field), ("csrf", csrf), ("categories", categories),
        ("setup", setup), ("signup", signup), ("overview", overview), ("edit", edit), ("form", form), ("done", done),
        ("factors", factors), ("totp", totp), ("codes", codes), ("passkey", passkey), ("passkeyPage", passkeyPage),
        ("problem", problem), ("externalSignup", externalSignup),
    ]

    static let layout = """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{{title}} · Konto</title>
    <link rel="icon" href="{{base}}/favicon.svg" type="image/svg+xml">
    <link rel="stylesheet" href="{{base}}/console.css">
    <script type="module" src="{{base}}/console.js"></script>
    </head>
    <body data-base="{{base}}">
    <header class="top"><a href="{{base}}/" class="brand">Konto</a></header>
    {{$main}}{{/main}}
    </body>
    </html>
    """

    /// A passkey ceremony: the page's script hands the options to the browser's WebAuthn API and sends its answer back
    /// in this form (``ConsolePage/Passkey``). Without WebAuthn (or without the script) the form stays hidden.
    static let passkey = """
    {{#passkey}}
    <form id="{{formId}}" method="post" action="{{base}}{{action}}" data-passkey="{{ceremony}}" data-options="{{options}}" hidden>
    {{>csrf}}
    <input type="hidden" name="credential" value="">
    {{#named}}<div class="field"><label for="field-passkey-name">Name it (optional)</label>
    <input id="field-passkey-name" name="name" type="text" maxlength="64" placeholder="Passkey"></div>{{/named}}
    <button type="button" id="{{buttonId}}" class="{{buttonClass}}">{{label}}</button>
    <p class="field-error" id="{{formId}}-error" role="alert" hidden></p>
    </form>
    {{/passkey}}
    """

    /// Making a passkey for the account.
    static let passkeyPage = """
    {{<layout}}{{$main}}
    <main id="passkey">
    <h1>Add a passkey</h1>
    {{>messages}}
    <p>Your device or a security key makes a passkey for this account: a login with the password then asks for it, and it signs you in on its own.</p>
    {{>passkey}}
    <p><a href="{{base}}/factors" class="button secondary" id="passkey-cancel">Cancel</a></p>
    </main>
    {{/main}}{{/layout}}
    """

    static let messages = """
    {{#notice}}<p role="status" id="notice" class="notice">{{notice}}</p>{{/notice}}
    {{#formError}}<div role="alert" id="form-error" class="form-error">{{formError}}</div>{{/formError}}
    """

    static let csrf = """
    <input type="hidden" name="_csrf" value="{{csrf}}">
    """

    /// One input of any kind; the error paragraph follows its input(s), and the input names it.
    static let field = """
    {{#isPlain}}
    <div class="field">
    <label for="{{inputId}}">{{label}}{{#required}} <span class="required">(required)</span>{{/required}}</label>
    <input id="{{inputId}}" name="{{identifier}}" type="{{inputType}}" value="{{value}}"{{#step}} step="{{step}}"{{/step}}{{#autocomplete}} autocomplete="{{autocomplete}}"{{/autocomplete}}{{#required}} aria-required="true"{{/required}}{{#ruleKey}} data-key="{{ruleKey}}"{{/ruleKey}}{{#error}} aria-invalid="true" aria-describedby="{{errorId}}"{{/error}}>
    {{#error}}<p class="field-error" id="{{errorId}}">{{error}}</p>{{/error}}
    </div>
    {{/isPlain}}
    {{#isCheckbox}}
    <div class="field checkbox">
    <input id="{{inputId}}" name="{{identifier}}" type="checkbox" value="true"{{#checked}} checked{{/checked}}{{#required}} aria-required="true"{{/required}}{{#error}} aria-invalid="true" aria-describedby="{{errorId}}"{{/error}}>
    <label for="{{inputId}}">{{label}}</label>
    {{#error}}<p class="field-error" id="{{errorId}}">{{error}}</p>{{/error}}
    </div>
    {{/isCheckbox}}
    {{#isSelect}}
    <div class="field">
    <label for="{{inputId}}">{{label}}{{#required}} <span class="required">(required)</span>{{/required}}</label>
    <select id="{{inputId}}" name="{{identifier}}"{{#required}} aria-required="true"{{/required}}{{#error}} aria-invalid="true" aria-describedby="{{errorId}}"{{/error}}>
    {{#options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/options}}
    </select>
    {{#error}}<p class="field-error" id="{{errorId}}">{{error}}</p>{{/error}}
    </div>
    {{/isSelect}}
    {{#isList}}
    <fieldset class="field list" id="list-{{identifier}}" data-list="{{identifier}}" data-label="{{label}}">
    <legend>{{label}}{{#required}} <span class="required">(required)</span>{{/required}}</legend>
    {{#items}}
    <div class="item"><label for="{{id}}">{{label}}</label>
    <input id="{{id}}" name="{{identifier}}[]" type="text" value="{{value}}"{{#ruleKey}} data-key="{{ruleKey}}"{{/ruleKey}}{{#error}} aria-invalid="true" aria-describedby="{{errorId}}"{{/error}}></div>
    {{/items}}
    <button type="button" id="add-{{identifier}}" class="secondary add" data-add="{{identifier}}" hidden>Add another</button>
    {{#error}}<p class="field-error" id="{{errorId}}">{{error}}</p>{{/error}}
    </fieldset>
    {{/isList}}
    {{#isName}}
    <fieldset class="field name" id="name-{{identifier}}"{{#required}} data-required="true"{{/required}}>
    <legend>{{label}}{{#required}} <span class="required">(required)</span>{{/required}}</legend>
    {{#parts}}
    <div class="item"><label for="{{id}}">{{label}}</label>
    <input id="{{id}}" name="{{name}}" type="text" value="{{value}}" autocomplete="{{autocomplete}}"{{#error}} aria-invalid="true" aria-describedby="{{errorId}}"{{/error}}></div>
    {{/parts}}
    {{#error}}<p class="field-error" id="{{errorId}}">{{error}}</p>{{/error}}
    </fieldset>
    {{/isName}}
    """

    /// Account keys' fields by category (sign-up, edit).
    static let categories = """
    {{#categories}}
    {{#wrapped}}<fieldset class="category" id="{{id}}">
    <legend>{{title}}</legend>{{/wrapped}}{{^wrapped}}<div class="category" id="{{id}}">{{/wrapped}}
    {{#fields}}{{>field}}{{/fields}}
    {{#wrapped}}</fieldset>{{/wrapped}}{{^wrapped}}</div>{{/wrapped}}
    {{/categories}}
    """

    static let setup = """
    {{<layout}}{{$main}}
    <main id="account-setup">
    <h1>Log in</h1>
    {{>messages}}
    <form id="login-form" method="post" action="{{base}}/login" novalidate data-validate>
    {{>csrf}}
    {{#fields}}{{>field}}{{/fields}}
    <button type="submit" id="login-submit">Log in</button>
    </form>
    {{>passkey}}
    {{#providers}}<p><a id="oidc-{{name}}" class="button secondary" href="{{base}}/oidc/{{name}}">Continue with {{displayName}}</a></p>{{/providers}}
    {{#emailCode}}<p><a id="email-code-link" href="{{base}}/login/code">Sign in with a code by mail</a></p>{{/emailCode}}
    <p><a id="reset-link" href="{{base}}/reset">Forgot your password?</a></p>
    <h2>New here?</h2>
    <p><a id="signup-link" class="button" href="{{base}}/signup">Sign up</a></p>
    {{#anonymous}}
    <form id="anonymous-form" method="post" action="{{base}}/anonymous">
    {{>csrf}}
    <button type="submit" id="anonymous-submit" class="secondary">Continue without an account</button>
    </form>
    {{/anonymous}}
    </main>
    {{/main}}{{/layout}}
    """

    /// A provider's sign-in that needs values the provider did not give: the same fields as sign-up, no password.
    static let externalSignup = """
    {{<layout}}{{$main}}
    <main id="external-signup">
    <h1>Almost there</h1>
    {{>messages}}
    <form id="external-signup-form" method="post" action="{{base}}/oidc/complete" novalidate data-validate>
    {{>csrf}}
    {{#externalSignUp}}<input type="hidden" name="signUpToken" value="{{token}}"><input type="hidden" name="provider" value="{{provider}}">{{/externalSignUp}}
    {{>categories}}
    <button type="submit" id="external-signup-submit">Create my account</button>
    </form>
    </main>
    {{/main}}{{/layout}}
    """

    static let signup = """
    {{<layout}}{{$main}}
    <main id="signup">
    <h1>{{#isAnonymous}}Keep your account: sign up{{/isAnonymous}}{{^isAnonymous}}Sign up{{/isAnonymous}}</h1>
    {{>messages}}
    <form id="signup-form" method="post" action="{{base}}/signup" novalidate data-validate>
    {{>csrf}}
    {{>categories}}
    <button type="submit" id="signup-submit">Sign up</button>
    </form>
    <p>Have an account? <a id="login-link" href="{{base}}/">Log in</a></p>
    </main>
    {{/main}}{{/layout}}
    """

    static let overview = """
    {{<layout}}{{$main}}
    <main id="overview">
    <h1>Your account</h1>
    {{>messages}}
    {{#isAnonymous}}
    <p id="anonymous-notice">You are using Konto without an account. <a id="signup-link" href="{{base}}/signup">Sign up</a> to keep it.</p>
    {{/isAnonymous}}
    {{#awaitsVerification}}
    <form id="verification-form" class="notice" method="post" action="{{base}}/verify/request">
    {{>csrf}}
    <p id="verification-notice">Your email address is not confirmed yet: open the link we sent to it.
    <button type="submit" id="verification-submit" class="secondary">Send a new link</button></p>
    </form>
    {{/awaitsVerification}}
    {{#shown}}
    <section class="category" id="{{id}}">
    <h2>{{title}}</h2>
    <dl>
    {{#values}}<dt>{{label}}</dt><dd id="{{id}}">{{text}}</dd>{{/values}}
    </dl>
    </section>
    {{/shown}}
    <nav class="actions" aria-label="Account actions">
    {{^isAnonymous}}
    <a id="edit-link" class="button" href="{{base}}/edit">Edit details</a>
    <a id="password-link" class="button secondary" href="{{base}}/password">Change password</a>
    <a id="userid-link" class="button secondary" href="{{base}}/user-id">Change {{userIdNoun}}</a>
    <a id="factors-link" class="button secondary" href="{{base}}/factors">Second factor</a>
    {{/isAnonymous}}
    </nav>
    <form id="logout-form" class="inline" method="post" action="{{base}}/logout">
    {{>csrf}}
    <button type="submit" id="logout-submit" class="secondary">Log out</button>
    </form>
    <form id="logout-everywhere-form" class="inline" method="post" action="{{base}}/logout-everywhere">
    {{>csrf}}
    <button type="submit" id="logout-everywhere-submit" class="secondary">Log out everywhere</button>
    </form>
    {{^isAnonymous}}<p><a id="delete-link" class="danger" href="{{base}}/delete">Delete account…</a></p>{{/isAnonymous}}
    </main>
    {{/main}}{{/layout}}
    """

    static let edit = """
    {{<layout}}{{$main}}
    <main id="edit">
    <h1>Edit details</h1>
    {{>messages}}
    <form id="edit-form" method="post" action="{{base}}/edit" novalidate data-validate>
    {{>csrf}}
    <input type="hidden" name="_version" value="{{version}}">
    {{>categories}}
    <p class="hint">An emptied field removes its value.</p>
    <button type="submit" id="edit-submit">Save</button>
    <a href="{{base}}/" class="button secondary">Cancel</a>
    </form>
    </main>
    {{/main}}{{/layout}}
    """

    /// A page of one form of a page's own fields (a password, a user id, a deletion, a reset); ``ConsolePage/Form``
    /// says which.
    static let form = """
    {{<layout}}{{$main}}
    {{#form}}
    <main id="{{mainId}}">
    <h1>{{heading}}</h1>
    {{#intro}}<p>{{intro}}</p>{{/intro}}
    {{>messages}}
    <form id="{{formId}}" method="post" action="{{base}}{{action}}" novalidate data-validate>
    {{>csrf}}
    {{#hasToken}}<input type="hidden" name="token" value="{{token}}">{{/hasToken}}
    {{#fields}}{{>field}}{{/fields}}
    <button type="submit" id="{{submitId}}"{{#danger}} class="danger"{{/danger}}>{{submitLabel}}</button>
    {{#cancels}}<a href="{{base}}/" class="button secondary">Cancel</a>{{/cancels}}
    </form>
    {{>passkey}}
    {{#backToLogin}}<p><a id="login-link" href="{{base}}/">Back to log in</a></p>{{/backToLogin}}
    </main>
    {{/form}}
    {{/main}}{{/layout}}
    """

    /// A page that only says what happened (deleted, a reset sent or done), with one link on.
    static let done = """
    {{<layout}}{{$main}}
    {{#done}}
    <main id="{{mainId}}">
    <h1>{{heading}}</h1>
    <p role="status" id="notice">{{text}}</p>
    <p><a id="{{linkId}}" class="button" href="{{base}}{{linkPath}}">{{linkLabel}}</a></p>
    </main>
    {{/done}}
    {{/main}}{{/layout}}
    """

    /// The account's second factors, with what can be done with them.
    static let factors = """
    {{<layout}}{{$main}}
    <main id="factors">
    <h1>Second factor</h1>
    {{>messages}}
    {{^hasFactors}}<p id="no-factors">No second factor: your password alone signs in.</p>{{/hasFactors}}
    {{#hasFactors}}
    <ul id="factor-list">
    {{#factors}}
    <li id="factor-{{id}}"><span class="factor-name">{{name}}</span> <span class="hint">{{detail}}</span>
    <form class="inline" method="post" action="{{base}}/factors/remove">{{>csrf}}<input type="hidden" name="factorId" value="{{id}}">
    <button type="submit" class="secondary" id="remove-{{id}}">Remove</button></form></li>
    {{/factors}}
    </ul>
    {{/hasFactors}}
    <form id="totp-start-form" class="inline" method="post" action="{{base}}/factors/totp">{{>csrf}}
    <button type="submit" id="totp-start-submit">Add an authenticator app</button></form>
    <form id="passkey-start-form" class="inline" method="post" action="{{base}}/factors/passkey">{{>csrf}}
    <button type="submit" id="passkey-start-submit" class="secondary">Add a passkey</button></form>
    <form id="codes-form" class="inline" method="post" action="{{base}}/recovery-codes">{{>csrf}}
    <button type="submit" id="codes-submit" class="secondary">New recovery codes</button></form>
    <p><a id="home-link" href="{{base}}/">Back to your account</a></p>
    </main>
    {{/main}}{{/layout}}
    """

    /// A TOTP enrolment: the QR code and the secret, then the first code.
    static let totp = """
    {{<layout}}{{$main}}
    {{#totp}}
    <main id="totp">
    <h1>Add an authenticator app</h1>
    {{>messages}}
    {{#hasQR}}<p>Scan this with your authenticator app, or type the secret in.</p>
    <figure id="totp-qr"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {{qrExtent}} {{qrExtent}}" width="232" height="232" shape-rendering="crispEdges" role="img" aria-label="QR code of the authenticator app's link"><rect width="{{qrExtent}}" height="{{qrExtent}}" fill="#fff"/><path d="{{qrPath}}" fill="#000"/></svg></figure>
    <p>Secret: <code id="totp-secret">{{secret}}</code></p>{{/hasQR}}
    <form id="totp-form" method="post" action="{{base}}/factors/totp/confirm" novalidate>
    {{>csrf}}
    <input type="hidden" name="factorId" value="{{factorId}}">
    <input type="hidden" name="otpauthURI" value="{{uri}}">
    <label for="field-code">Code from the app</label>
    <input id="field-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code"{{#error}} aria-invalid="true" aria-describedby="error-code"{{/error}}>
    {{#error}}<p class="field-error" id="error-code">{{error}}</p>{{/error}}
    <button type="submit" id="totp-submit">Confirm</button>
    <a href="{{base}}/factors" class="button secondary">Cancel</a>
    </form>
    </main>
    {{/totp}}
    {{/main}}{{/layout}}
    """

    /// New recovery codes, shown this once.
    static let codes = """
    {{<layout}}{{$main}}
    <main id="codes">
    <h1>Recovery codes</h1>
    <p role="status" id="notice">Keep these somewhere safe: each signs you in once if you lose your authenticator app. They are shown only now; every earlier code stopped working.</p>
    <ol id="code-list">{{#codes}}<li><code>{{.}}</code></li>{{/codes}}</ol>
    <p><a id="factors-link" class="button" href="{{base}}/factors">Done</a></p>
    </main>
    {{/main}}{{/layout}}
    """

    static let problem = """
    {{<layout}}{{$main}}
    <main id="problem">
    <h1>{{title}}</h1>
    {{>messages}}
    <p><a id="home-link" href="{{base}}/">Back to your account</a></p>
    </main>
    {{/main}}{{/layout}}
    """
}
