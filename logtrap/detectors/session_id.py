"""session_id: one page copied under a new session-id value on nearly every request.

Candidate parameters of a pattern are the session names (`patterns.session_params`: sid,
phpsessid, jsessionid... plus the site's own; vBulletin's `s` where its values are 32 hex
digits, `_SESSION_VALUED`), matrix parameters (`;jsessionid=`), and any
parameter whose sampled values all look like minted ids: letters and digits, at least
`session_id_min_value_length` long, letters in most of them (numbers alone are database ids
that select content, such as a product's `?variant=40123456789`). Removing the parameter from each sampled URL gives the page
it copies. A pattern is a session-id trap when

- at least `session_id_min_urls` sampled URLs carry the parameter,
- they copy few pages: a URL's page has at least `session_id_min_copies` copies (for a
  parameter named as a session, `session_id_min_named_copies`), on average
  over URLs (`copies_per_url`: a few pages copied fifty times are a trap even among many
  copied once; estimated from the pairs of sampled URLs that copy one page, so that a
  site-wide trap whose pages outnumber the sample is seen too; `urls_per_page` is the plain
  mean, over the pages, estimated past the sample too),
- the value is new on nearly every request: distinct URLs / requests >= `session_id_min_new_share`,
- the copies answer like their page: one size for most pages (of those with two sampled
  copies or more); for a parameter named as a session (`sid`, ...) the copies' sizes may
  spread over twice `one_page_bytes` (a token or nonce in the page), not for one found by
  its values only (a product's variant pages, one template a few bytes apart, have minted
  looking ids too), which also needs people to make at most a tenth of its requests.

WordPress's comment reply links (`?replytocom=ID`) are the same trap under a name that says
what it is: each post again once per comment, the reply form moved under that comment. As
for a session's name, two copies a page are enough; the comments are bounded, so the values
need not be new on each request (crawlers come back to the same reply links); people make at
most a tenth of its requests, as for an id found by its values (WordPress moves the form with
JavaScript: people hardly open the links, where a site's own `replytocom` permalinks of
answers are pages people read). The form's heading names the comment's author, so the copies of a
post may differ in size by up to `REPLY_SIZE_SPREAD` of it, and the advice is WordPress's. A
shop's action links (`ACTION_PARAMS`: WooCommerce's `?add-to-cart=ID` on each product of a
listing) are judged as reply links are: the listing again per product, a notice naming it.
So are sharing buttons' links (`SHARE_PARAM`: Jetpack's `?share=facebook&nb=1` on every post),
known by their values, the networks (`_NETWORK_VALUE`: a document's `?share=<token>` is no
button): each a redirect to the network's share dialog, once per network and post.

A campaign or click id (`patterns.TRACKING_PARAMS`, `utm_*`, `--tracking-param`) found this
way gets `TRACKING_ADVICE` (rel=canonical), and no robots.txt line (`robots.TRACKING_REASON`):
people land on those URLs from ads, mail and search results.

So are a login link's return-to parameters (`RETURN_PARAMS`: `/user/login?destination=/news/5`,
`Special:UserLogin&returnto=Main_Page`, `wp-login.php?redirect_to=`): the login form again for
every page of the site, echoing the page in a hidden field (within `REPLY_SIZE_SPREAD` of its
size). Their values are the site's pages, fetched again and again: not new on nearly every
request, and wasted all the same. People log in from the pages they read, and the form is the
same whoever opens it: on a login or account page (`_LOGIN_PAGE`) their share of its requests
is not limited.

Wasted requests: the pattern's bot requests beyond one per copied page; all of them for reply,
action and login links, whose pages are crawled at their own URLs too.
"""

from __future__ import annotations

import polars as pl

from logtrap import findings as f
from logtrap import schema as s
from logtrap.detectors import _shape
from logtrap.patterns import is_tracking, session_params
from logtrap.settings import Settings
from logtrap.traffic import Traffic

KIND = "session_id"

ADVICE = (
    "Keep session ids in cookies, never in URLs: stop appending the parameter to links (and "
    "turn off URL-based sessions, e.g. session.use_trans_sid=0 in PHP), and point "
    "rel=canonical at the URL without it; then Disallow URLs with the parameter in robots.txt."
)

REPLY_PARAM = "replytocom"
# judgement: an author's name and a comment id, tens of bytes on a post of tens of kB
REPLY_SIZE_SPREAD = 0.02
REPLY_ADVICE = (
    "WordPress's comment reply links copy each post once per comment (?replytocom=): drop the "
    "parameter from the links (the reply form still opens with JavaScript; SEO plugins offer "
    "the setting, or filter comment_reply_link), then Disallow URLs with the parameter in "
    "robots.txt (WordPress already marks these copies noindex)."
)

# A shop's links that act on the page they are on: WooCommerce's `?add-to-cart=ID` on every
# product of a listing, YITH's wishlist `?add_to_wishlist=ID`. Each gives the listing again
# (a notice naming the product, or a redirect to the cart), once per product: reply links'
# trap, under names that say what they do
ACTION_PARAMS = frozenset({"add-to-cart", "add_to_wishlist", "add-to-wishlist"})
ACTION_ADVICE = (
    "Links that act (add to cart, add to wishlist) copy each listing once per product: make "
    "them buttons or forms that POST (WooCommerce's AJAX add to cart), or mark them "
    "rel=\"nofollow\", then Disallow URLs with the parameter in robots.txt (an action is no "
    "page to crawl)."
)

# Sharing buttons' links: Jetpack's `?share=facebook&nb=1`, `?share=x&nb=1`... under every post,
# each a redirect to the network's share dialog (a print or mail form for two of them). Known
# by its values, a network's name (`_VALUED`)
SHARE_PARAM = "share"
_NETWORK_VALUE = (r"(?i)^(?:facebook|twitter|x|linkedin|tumblr|pinterest|pocket|reddit|telegram"
                  r"|(?:jetpack-)?whatsapp|email|print|skype|nextdoor|mastodon|threads|bluesky"
                  r"|custom-\d+)$")
SHARE_ADVICE = (
    "Sharing buttons' links (?share=facebook, ?share=x: Jetpack's, under every post) each answer "
    "a redirect to the network's share dialog, once per network and post: nothing to crawl. "
    "Switch the buttons to the official (JavaScript) style, or mark their links "
    "rel=\"nofollow\", then Disallow URLs with the parameter in robots.txt."
)

# Campaign and click ids (`patterns.TRACKING_PARAMS`, `utm_*`): the URLs people land on from
# ads, mail and Google's own results (Merchant Center's `srsltid`). Copies all the same, but
# no robots.txt line's (`robots.TRACKING_REASON`)
TRACKING_ADVICE = (
    "Tracking parameters (campaign and click ids) make a copy of each page per campaign or "
    "click: keep them off the site's own links, and point rel=canonical at the URL without "
    "them so search engines fold the copies into the page (a redirect that drops them, after "
    "analytics has read them, ends the copies). Do not Disallow them in robots.txt: people "
    "land on these URLs from ads, newsletters and search results, and a blocked URL's "
    "canonical cannot be read."
)

# A login or account page's link that carries the page it was clicked on, to go back there
# after (Drupal's `?destination=`, MediaWiki's `&returnto=`, WordPress's `?redirect_to=`): the
# login form again for every page of the site. `destination` is a travel site's filter too:
# it counts only where its values are paths or URLs (`_PATH_VALUE`). Not `redirect` (MediaWiki's
# `redirect=no` shows a page) nor `next` (a list's cursor).
RETURN_PARAMS = frozenset({"returnto", "return_to", "returnurl", "return_url", "redirect_to",
                           "redirect_url", "came_from", "backurl", "back_url", "destination"})
# A login or account page, by its URL without the return-to parameter (judgement): a login
# word of its own, or after a who (Drupal's /user/login, WordPress's wp-login.php, Devise's
# /users/sign_in, ASP.NET's /MemberLogin.aspx, /customerlogin, `?mode=login`; not
# /designing-tours, /catalog-online, /login-free-cameras), an account or auth word of its own
# (a /my-account/, Keycloak's /auth/; not /authors/, /accountants), or Rails' /sessions/new
_LOGIN_PAGE = (r"(?i)(?:^|[^a-z])(?:customer|member|user|admin|client|staff|my)?"
               r"(?:log[-_]?in|sign[-_]?in|log[-_]?on)(?:$|[^a-z-]|-[^a-z])"
               r"|(?:^|[/:._-])(?:auth|account|sessions?/new)(?:$|[/._?&=-])")
_PATH_VALUE = r"^(?:/|%2[Ff]|https?(?::|%3[Aa]))"
# Names that say what they are only with values of their kind, most of a pattern's (judgement:
# 90%): `?destination=/news/5` is a login link's, `?destination=paris` a trip's;
# `?share=facebook` a sharing button's, `?share=k3x9w` a document's
_VALUED = {"destination": _PATH_VALUE, SHARE_PARAM: _NETWORK_VALUE}
# ...and a session's name only with a session hash's values, most of a pattern's (90%):
# vBulletin's and Invision's `?s=` (32 hex digits, on every link for a visitor without
# cookies), which is WordPress's search `?s=query` on another site
_SESSION_VALUED = {"s": r"^[0-9a-f]{32}$"}
_HASHED = "_session_valued"  # a parameter named as a session by its values (`_SESSION_VALUED`)
RETURN_ADVICE = (
    "Links to the login (or account) page carry the page they were clicked on, to return "
    "there after: the same form again for every page of the site. Link it without the "
    "parameter (add it with JavaScript on click, or mark those links rel=\"nofollow\"), then "
    "Disallow URLs with the parameter in robots.txt; a login page needs no crawling."
)


def named_params(settings: Settings) -> frozenset[str]:
    """The parameter names that say they are a session id or a per-link copy, lowercase: the
    session names (`patterns.session_params`), WordPress's `replytocom`, a shop's action links
    (`ACTION_PARAMS`), sharing buttons' links (`SHARE_PARAM`) and the return-to parameters of
    login links (`RETURN_PARAMS`). Appended to links whatever the path, unlike a parameter
    found by its values alone."""
    return frozenset(session_params(settings) | {REPLY_PARAM, SHARE_PARAM} | ACTION_PARAMS | RETURN_PARAMS)


def named_by_values(pairs: pl.DataFrame) -> list[str]:
    """The parameters of these (name, value) pairs (`robots._pairs` of a trap's URLs) named
    as a session by their values (`_SESSION_VALUED`), as `detect` names them: their rules are
    for the whole site, as a session name's are.

    >>> named_by_values(pl.DataFrame({"name": ["s", "s", "t"], "value": ["0" * 32, "a1" * 16, "5"]}))
    ['s']
    >>> named_by_values(pl.DataFrame({"name": ["s", "s"], "value": ["boots", "a1" * 16]}))
    []
    """
    return [name for name, kind in _SESSION_VALUED.items()
            if pairs.filter(pl.col("name").str.to_lowercase() == name)
            .select(pl.col("value").str.contains(kind).mean() >= 0.9).item() is True]


_NAME, _BASE = "session_param", "page"
# A session id's value: letters and digits, a digit among them, `session_id_min_value_length`
# long at least (a store's `1`, a language's `en` are not); most of a session's values are
_MINTED_VALUE = r"^[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*$"
_MINTED_SHARE = 0.9
# A parameter found by its values alone: people make at most this share of its requests
# (judgement: session ids in links are crawlers' URLs; people's repeat visits keep cookies)
_UNNAMED_MAX_HUMAN_SHARE = 0.1


def _candidates(urls: pl.DataFrame, settings: Settings) -> pl.DataFrame:
    """One row per sampled URL and candidate parameter: (…, session_param, page), where page is
    the URL with that parameter (and its value) removed."""
    known = sorted(named_params(settings))
    pairs = _shape.query_of(pl.col(s.URL)).str.split("&")
    query = (
        urls.with_columns(pairs.alias("pairs"), pairs.alias("pair"))
        .with_columns(pl.int_ranges(pl.col("pairs").list.len()).alias("pos"))
        .explode("pair", "pos")
        .with_columns(
            pl.col("pair").str.splitn("=", 2).struct.field("field_0").alias(_NAME),
            pl.col("pair").str.splitn("=", 2).struct.field("field_1").fill_null("").alias("value"),
        )
        .filter(pl.col(_NAME) != "")
    )
    min_len = settings.session_id_min_value_length
    value = pl.col("value")
    looks_like_id = (
        (value.str.contains(rf"^[A-Za-z0-9_-]{{{min_len},}}$") & value.str.contains(r"[0-9]"))
        .all()
        .over(*_shape.KEYS, _NAME)
        # minted tokens mix letters in (a hex id is all digits about once in 3 million);
        # numbers are database ids selecting content (?variant=40123456789, ?id=...)
        & (value.str.contains(r"[A-Za-z]").mean().over(*_shape.KEYS, _NAME) >= 0.5)
    )
    kept = pl.concat_list(
        pl.col("pairs").list.head(pl.col("pos")), pl.col("pairs").list.slice(pl.col("pos") + 1)
    ).list.join("&")
    name = pl.col(_NAME).str.to_lowercase()
    named = name.is_in(known)
    for valued, kind in _VALUED.items():
        named &= (name != valued) | (value.str.contains(kind).mean().over(*_shape.KEYS, _NAME) >= 0.9)
    hashed = pl.lit(False)
    for valued, kind in _SESSION_VALUED.items():
        hashed |= (name == valued) & (value.str.contains(kind).mean().over(*_shape.KEYS, _NAME) >= 0.9)
    query = query.filter(named | looks_like_id).with_columns(
        hashed.alias(_HASHED),
        pl.concat_str(_shape.path_of(pl.col(s.URL)), pl.when(kept != "").then(pl.lit("?") + kept))
        .fill_null(_shape.path_of(pl.col(s.URL)))
        .alias(_BASE)
    )
    matrix = (
        urls.filter(pl.col(s.URL).str.contains(r";[^/?;=]+="))
        .with_columns(
            pl.col(s.URL).str.extract(r";([^/?;=]+)=", 1).alias(_NAME),
            pl.col(s.URL).str.replace(r";[^/?;=]+=[^/?;]*", "").alias(_BASE),
            pl.col(s.URL).str.extract(r";[^/?;=]+=([^/?;]*)", 1).alias("value"),
            pl.lit(False).alias(_HASHED),
        )
        .filter(pl.col(_NAME).str.to_lowercase().is_in(known))
    )
    cols = [*urls.columns, _NAME, _BASE, "value", _HASHED]
    return pl.concat([query.select(cols), matrix.select(cols)])


def _copies_per_url() -> pl.Expr:
    """How many copies a URL's page has, on average over the pattern's URLs, from its sample.

    The sample is uniform over the pattern's U URLs (`traffic.urls`: the smallest hashes), so
    each pair of URLs is in it alike: the pairs of sampled copies of one page, scaled by
    U(U-1) / (k(k-1)) for k sampled URLs, estimate the sum over pages of c(c-1) for c copies,
    and the mean over URLs is 1 + that sum / U. Exact when the whole pattern is in the sample.
    Sampled URLs per sampled page would not do: with 1,000 of 30,000 URLs that copy 5,000 pages
    six times each, nearly every sampled URL is another page's (1.1 per page; this says ~6).
    """
    k = pl.col("sampled_urls")
    u = pl.max_horizontal(pl.col(s.UNIQUE_URLS), k)  # the estimate of U can fall below k
    return 1 + pl.col("_pairs") * (u - 1) / (k * (k - 1)).clip(lower_bound=1)


def _pages() -> pl.Expr:
    """The pages the pattern's URLs copy: those sampled when the whole pattern is; otherwise
    estimated as Chao & Lin (2012) estimate species sampled without replacement, from the pages
    seen with one and with two sampled copies (f1, f2), k sampled URLs, a share q of all:
    d + f1² / (2 f2 k / (k - 1) + f1 q / (1 - q)). Pages copied unevenly (a few pages with
    fifty copies, most with one) are not undercounted as U over the mean copies would."""
    k, d = pl.col("sampled_urls"), pl.col("_sampled_pages")
    q = k / pl.max_horizontal(pl.col(s.UNIQUE_URLS), k)
    f1, f2 = pl.col("_once"), pl.col("_twice")
    denominator = 2 * f2 * k / (k - 1).clip(lower_bound=1) + f1 * q / (1 - q)
    estimate = pl.when((q < 1) & (denominator > 0)).then(d + f1**2 / denominator).otherwise(d)
    return pl.max_horizontal(estimate.round(0), d).cast(pl.Int64)


def detect(traffic: Traffic, settings: Settings) -> pl.DataFrame:
    """Session-id traps: a parameter with a new value on nearly every request, same pages.

    >>> from logtrap.traffic import Tally
    >>> detect(Tally().finish(), Settings()).shape
    (0, 9)
    """
    if traffic.urls.height == 0:
        return f.empty_findings()
    urls = _shape.per_url(traffic.urls, _shape.shell_sizes(traffic, settings))
    pairs = _candidates(urls, settings)
    if pairs.height == 0:
        return f.empty_findings()
    keys = [*_shape.KEYS, _NAME, _HASHED]  # (_HASHED: one value per parameter of a pattern)
    sized = pl.col(s.BYTES).filter(_shape.sized_ok())
    acting = pl.col(_NAME).str.to_lowercase().is_in(sorted(ACTION_PARAMS))
    sharing = pl.col(_NAME).str.to_lowercase() == SHARE_PARAM
    reply = (pl.col(_NAME).str.to_lowercase() == REPLY_PARAM) | acting | sharing
    returning = pl.col(_NAME).str.to_lowercase().is_in(sorted(RETURN_PARAMS))
    spread = sized.max() - sized.min()
    # a session parameter by its name: its copies may spread over the few bytes a token or
    # nonce takes; one found by its values only must be one exact size (a product's variant
    # pages are one template a few bytes apart, and their ids look minted too)
    named = pl.col(_NAME).str.to_lowercase().is_in(sorted(session_params(settings))) | pl.col(_HASHED)
    # named for what it copies, as a session's name is: a post's reply links are copies
    # whatever their number and however often crawlers come back to them
    copy_named = named | reply  # (people's share still limited: below)
    pages = pairs.group_by(*keys, _BASE).agg(
        pl.len().alias("copies"),
        (sized.n_unique() <= 1).alias("_exact"),
        (spread <= 2 * settings.one_page_bytes).alias("_tight"),
        (spread <= REPLY_SIZE_SPREAD * sized.max()).alias("_near"),
        pl.col(_shape.SHELL).any().alias("_shell"),
    ).with_columns(
        (
            pl.col("_exact")
            | (named & pl.col("_tight").fill_null(True))
            | ((reply | returning) & pl.col("_near").fill_null(False))
        ).alias("_one_size")
    )
    per_param = (
        pages.group_by(keys)
        .agg(
            pl.col("copies").sum().alias("sampled_urls"),
            pl.len().alias("_sampled_pages"),
            (pl.col("copies") == 1).sum().alias("_once"),
            (pl.col("copies") == 2).sum().alias("_twice"),
            (pl.col("copies") * (pl.col("copies") - 1)).sum().alias("_pairs"),
            # only a page with two sampled copies or more shows whether they differ; a page
            # answered with the site's shell says nothing of its copies' content
            (pl.col("_one_size") & ~pl.col("_shell"))
            .filter(pl.col("copies") >= 2)
            .mean()
            .fill_null(0.0)
            .alias("one_size_share"),
        )
        .join(
            pairs.group_by(keys).agg(
                # values per sampled URL: a session mints one per visit, a store's `sid=1..3`
                # names three stores however many URLs carry them; a crawler without cookies
                # keeps one session through a visit (PHP's trans-sid resumes it), so minted
                # values count whatever their number
                (pl.col("value").n_unique() / pl.len()).alias("_value_share"),
                (pl.col("value").str.contains(_MINTED_VALUE)
                 & (pl.col("value").str.len_chars() >= settings.session_id_min_value_length))
                .mean().alias("_minted_share"),
                pl.col(s.BOT_REQUESTS).sum().alias("sampled_bot"),
                pl.col(s.REQUESTS).sum().alias("sampled_requests"),
                pl.col(s.HUMAN_REQUESTS).sum().alias("human_requests_sampled"),
                (pl.col(_BASE).str.contains(_LOGIN_PAGE).mean() >= _MINTED_SHARE).alias("_login"),
            ),
            on=keys,
        )
        .join(_shape.pattern_totals(traffic), on=_shape.KEYS, how="left")
        .with_columns(
            _copies_per_url().alias("_copies"),
            (pl.col("sampled_urls") / pl.col("sampled_requests")).round(3).alias("new_value_share"),
        )
        .with_columns(
            pl.col("_copies").round(1).alias("copies_per_url"),
            _pages().alias("pages"),
        )
        .with_columns((pl.col(s.UNIQUE_URLS) / pl.col("pages")).round(1).alias("urls_per_page"))
        .filter(
            (pl.col("sampled_urls") >= settings.session_id_min_urls)
            # a session's name says what the copies are: a forum's topics, each crawled under
            # a few session ids in a week, are the trap however many topics there are
            & (pl.col("copies_per_url")
               >= pl.when(copy_named).then(settings.session_id_min_named_copies)
               .otherwise(settings.session_id_min_copies))
            # a login link's return-to values are the site's pages, and a post's reply links
            # its comments, fetched again and again: bounded, and wasted all the same
            & ((pl.col("_value_share") >= settings.session_id_min_new_share)
               | (pl.col("_minted_share") >= _MINTED_SHARE)
               # a sharing button's values are the few networks, on every post
               | sharing)
            & ((pl.col("new_value_share") >= settings.session_id_min_new_share)
               | reply | returning)
            & (pl.col("one_size_share") >= 0.5)
            # found by its values alone, or a reply link, it needs crawlers' URLs: pages people
            # read under minted-looking ids are a shop's variants (?sku=), not copies, and a
            # Q&A site's answer permalinks `?replytocom=` people open from their mail are pages
            # (a login link's copies are the login form whoever opens them: people log in, 18%
            # of a code forge's `/user/login?redirect_to=`, review 19; not a return-to name on
            # another page, a travel site's `/tours?destination=/europe/italy` people land on)
            & (named | (returning & pl.col("_login"))
               | (pl.col("human_requests_sampled") <= _UNNAMED_MAX_HUMAN_SHARE * pl.col("sampled_requests")))
        )
        # one finding per pattern: its most copied parameter
        .sort("sampled_urls", _NAME, descending=[True, False])
        .unique(_shape.KEYS, keep="first", maintain_order=True)
    )
    rows = per_param.with_columns(
        # one fetch per copied page would do; a reply, action or login link copies a page
        # crawled at its own URL without it: every fetch is waste (its rule blocked 18,359
        # requests where the finding said 14,946 were wasted; review 18)
        pl.when(reply | returning).then(pl.col(s.BOT_REQUESTS))
        .otherwise((pl.col(s.BOT_REQUESTS) - pl.col("pages")).clip(lower_bound=0)).alias(s.WASTED_REQUESTS),
        pl.col("one_size_share").round(3),
    ).filter(pl.col(s.WASTED_REQUESTS) > 0)
    ex = _shape.examples(pairs.join(rows.select(keys), on=keys, how="semi"))
    rows = rows.join(ex, on=_shape.KEYS, how="left")
    return _shape.findings(
        KIND,
        rows,
        settings,
        evidence=[
            _NAME, "unique_urls", "sampled_urls", "pages", "urls_per_page", "copies_per_url",
            "new_value_share", "one_size_share", s.HUMAN_REQUESTS,
        ],  # fmt: skip
        advice=pl.when(sharing).then(pl.lit(SHARE_ADVICE))
        .when(acting).then(pl.lit(ACTION_ADVICE))
        .when(reply).then(pl.lit(REPLY_ADVICE))
        .when(returning).then(pl.lit(RETURN_ADVICE))
        .when(is_tracking(pl.col(_NAME), settings)).then(pl.lit(TRACKING_ADVICE))
        .otherwise(pl.lit(ADVICE)),
    )

