//! Request building for every operation, and every validation rule, through the public API.

use super::*;
use serde_json::json;

fn op(key: &str) -> &'static Operation {
    operation(key).unwrap_or_else(|| panic!("{key} is not in the catalog"))
}

fn build(key: &str, params: Value) -> MalRequest {
    build_request(op(key), &params, None)
        .unwrap_or_else(|problems| panic!("{key} rejected {params}: {problems:?}"))
}

fn build_with_fields(key: &str, params: Value, fields: Value) -> MalRequest {
    build_request(op(key), &params, Some(&fields))
        .unwrap_or_else(|problems| panic!("{key} rejected {params}: {problems:?}"))
}

fn problems(key: &str, params: Value) -> Vec<String> {
    match build_request(op(key), &params, None) {
        Ok(request) => panic!("{key} accepted {params}: {request:?}"),
        Err(problems) => problems,
    }
}

fn fields_problems(key: &str, params: Value, fields: Value) -> Vec<String> {
    match build_request(op(key), &params, Some(&fields)) {
        Ok(request) => panic!("{key} accepted fields {fields}: {request:?}"),
        Err(problems) => problems,
    }
}

fn get(path_and_query: &str, requires_token: bool) -> MalRequest {
    MalRequest {
        method: HttpMethod::Get,
        path_and_query: path_and_query.to_owned(),
        form_body: None,
        requires_token,
        empty_result: false,
    }
}

// ---- catalog shape ----

#[test]
fn catalog_lists_the_nineteen_operations_in_api_order() {
    let keys: Vec<&str> = operations().map(Operation::key).collect();
    assert_eq!(
        keys,
        [
            "anime.get",
            "anime.search",
            "anime.seasonal",
            "anime.ranking",
            "anime.suggestions",
            "anime.updateMyListStatus",
            "anime.deleteFromList",
            "manga.get",
            "manga.search",
            "manga.ranking",
            "manga.updateMyListStatus",
            "manga.deleteFromList",
            "user.me",
            "user.get",
            "user.animeList",
            "user.mangaList",
            "forum.boards",
            "forum.topics",
            "forum.topic",
        ]
    );
    assert!(operation("anime.nope").is_none());
    assert!(operation("").is_none());
}

#[test]
fn only_the_zero_parameter_operations_take_options_first() {
    let options_first: Vec<&str> = operations()
        .filter(|op| op.options_first())
        .map(Operation::key)
        .collect();
    assert_eq!(
        options_first,
        ["anime.suggestions", "user.me", "forum.boards"]
    );
}

#[test]
fn methods_follow_the_rest_verbs() {
    for op in operations() {
        let expected = if op.key().ends_with("updateMyListStatus") {
            HttpMethod::Patch
        } else if op.key().ends_with("deleteFromList") {
            HttpMethod::Delete
        } else {
            HttpMethod::Get
        };
        assert_eq!(op.method(), expected, "{}", op.key());
    }
    assert_eq!(HttpMethod::Get.as_str(), "GET");
    assert_eq!(HttpMethod::Patch.as_str(), "PATCH");
    assert_eq!(HttpMethod::Delete.as_str(), "DELETE");
}

// ---- anime ----

#[test]
fn anime_get_uses_the_default_field_list_unless_fields_are_given() {
    let request = build("anime.get", json!({ "id": 30230 }));
    assert_eq!(request.method, HttpMethod::Get);
    assert!(request
        .path_and_query
        .starts_with("/anime/30230?fields=id,title,main_picture,"));
    assert!(request.path_and_query.ends_with(",studios,statistics"));
    assert!(!request.requires_token);
    assert_eq!(request.form_body, None);
    assert!(!request.empty_result);

    assert_eq!(
        build_with_fields("anime.get", json!({ "id": 1 }), json!(["id", "title"])),
        get("/anime/1?fields=id,title", false)
    );
    assert_eq!(
        build_with_fields(
            "anime.get",
            json!({ "id": 1 }),
            json!(" id,my_list_status{score} ")
        ),
        get("/anime/1?fields=id,my_list_status%7Bscore%7D", false)
    );
}

#[test]
fn anime_id_may_arrive_as_a_whole_double() {
    assert_eq!(
        build_with_fields("anime.get", json!({ "id": 21.0 }), json!("id")),
        get("/anime/21?fields=id", false)
    );
}

#[test]
fn anime_search_sends_query_limit_offset_and_nsfw() {
    assert_eq!(
        build("anime.search", json!({ "q": "one" })),
        get("/anime?q=one", false)
    );
    assert_eq!(
        build(
            "anime.search",
            json!({ "q": "one piece & co", "limit": 100, "offset": 0, "nsfw": true })
        ),
        get(
            "/anime?q=one%20piece%20%26%20co&limit=100&offset=0&nsfw=true",
            false
        )
    );
    assert_eq!(
        build_with_fields(
            "anime.search",
            json!({ "q": "x", "limit": 1 }),
            json!(["id"])
        ),
        get("/anime?q=x&limit=1&fields=id", false)
    );
}

#[test]
fn anime_seasonal_fills_year_and_season_into_the_path() {
    assert_eq!(
        build("anime.seasonal", json!({ "year": 2024, "season": "fall" })),
        get("/anime/season/2024/fall", false)
    );
    assert_eq!(
        build(
            "anime.seasonal",
            json!({ "year": 2017, "season": "winter", "sort": "anime_num_list_users", "limit": 500, "offset": 10, "nsfw": false })
        ),
        get(
            "/anime/season/2017/winter?sort=anime_num_list_users&limit=500&offset=10&nsfw=false",
            false
        )
    );
}

#[test]
fn anime_ranking_maps_ranking_type_to_snake_case() {
    assert_eq!(
        build(
            "anime.ranking",
            json!({ "rankingType": "bypopularity", "limit": 4 })
        ),
        get("/anime/ranking?ranking_type=bypopularity&limit=4", false)
    );
}

#[test]
fn anime_suggestions_takes_no_params_and_needs_a_token() {
    assert_eq!(
        build("anime.suggestions", Value::Null),
        get("/anime/suggestions", true)
    );
    assert_eq!(
        build("anime.suggestions", json!({})),
        get("/anime/suggestions", true)
    );
    assert_eq!(
        build_with_fields("anime.suggestions", Value::Null, json!(["id", "mean"])),
        get("/anime/suggestions?fields=id,mean", true)
    );
}

#[test]
fn anime_list_update_accepts_camel_and_snake_keys_and_emits_snake_case_form() {
    let request = build(
        "anime.updateMyListStatus",
        json!({
            "id": 5,
            "status": "watching",
            "numWatchedEpisodes": 12,
            "score": 10,
            "comments": "a & b",
            "is_rewatching": false,
            "numTimesRewatched": 0,
            "rewatch_value": 5,
            "priority": 2,
            "tags": ["fav", "re watch"],
        }),
    );
    assert_eq!(
        request,
        MalRequest {
            method: HttpMethod::Patch,
            path_and_query: "/anime/5/my_list_status".to_owned(),
            form_body: Some(
                "status=watching&is_rewatching=false&score=10&num_watched_episodes=12&priority=2\
                 &num_times_rewatched=0&rewatch_value=5&tags=fav%2Cre+watch&comments=a+%26+b"
                    .to_owned()
            ),
            requires_token: true,
            empty_result: false,
        }
    );
    let snake = build(
        "anime.updateMyListStatus",
        json!({ "id": 5, "num_watched_episodes": 3, "isRewatching": true }),
    );
    assert_eq!(
        snake.form_body.as_deref(),
        Some("is_rewatching=true&num_watched_episodes=3")
    );
}

#[test]
fn anime_list_update_can_clear_comments_and_tags() {
    let request = build(
        "anime.updateMyListStatus",
        json!({ "id": 5, "comments": "", "tags": [] }),
    );
    assert_eq!(request.form_body.as_deref(), Some("tags=&comments="));
}

#[test]
fn anime_delete_from_list_resolves_empty_and_needs_a_token() {
    assert_eq!(
        build("anime.deleteFromList", json!({ "id": 7 })),
        MalRequest {
            method: HttpMethod::Delete,
            path_and_query: "/anime/7/my_list_status".to_owned(),
            form_body: None,
            requires_token: true,
            empty_result: true,
        }
    );
}

// ---- manga ----

#[test]
fn manga_get_uses_the_manga_default_field_list() {
    let request = build("manga.get", json!({ "id": 2 }));
    assert!(request
        .path_and_query
        .starts_with("/manga/2?fields=id,title,"));
    assert!(request
        .path_and_query
        .contains(",num_volumes,num_chapters,authors%7Bfirst_name,last_name%7D,"));
    assert!(!request.path_and_query.contains("num_episodes"));
    assert!(!request.requires_token);
}

#[test]
fn manga_search_and_ranking_build_their_queries() {
    assert_eq!(
        build(
            "manga.search",
            json!({ "q": "berserk", "offset": 100, "nsfw": true })
        ),
        get("/manga?q=berserk&offset=100&nsfw=true", false)
    );
    assert_eq!(
        build(
            "manga.ranking",
            json!({ "rankingType": "manhwa", "offset": 5 })
        ),
        get("/manga/ranking?ranking_type=manhwa&offset=5", false)
    );
}

#[test]
fn manga_list_update_emits_the_manga_form_fields() {
    let request = build(
        "manga.updateMyListStatus",
        json!({
            "id": 9,
            "status": "plan_to_read",
            "isRereading": true,
            "num_volumes_read": 2,
            "numChaptersRead": 20,
            "numTimesReread": 1,
            "rereadValue": 0,
            "priority": 0,
            "score": 0,
        }),
    );
    assert_eq!(request.method, HttpMethod::Patch);
    assert_eq!(request.path_and_query, "/manga/9/my_list_status");
    assert_eq!(
        request.form_body.as_deref(),
        Some(
            "status=plan_to_read&is_rereading=true&score=0&num_volumes_read=2\
             &num_chapters_read=20&priority=0&num_times_reread=1&reread_value=0"
        )
    );
    assert!(request.requires_token);
    assert!(!request.empty_result);
}

#[test]
fn manga_delete_from_list_resolves_empty() {
    let request = build("manga.deleteFromList", json!({ "id": 9 }));
    assert_eq!(request.method, HttpMethod::Delete);
    assert_eq!(request.path_and_query, "/manga/9/my_list_status");
    assert!(request.requires_token && request.empty_result);
}

// ---- user ----

#[test]
fn user_me_needs_a_token_and_selects_the_profile_fields() {
    let request = build("user.me", Value::Null);
    assert_eq!(
        request.path_and_query,
        "/users/@me?fields=id,name,picture,gender,birthday,location,joined_at,anime_statistics,time_zone,is_supporter"
    );
    assert!(request.requires_token);
    assert_eq!(
        build_with_fields("user.me", Value::Null, json!("id,name")),
        get("/users/@me?fields=id,name", true)
    );
}

#[test]
fn user_get_trims_and_encodes_the_name_and_needs_a_token_only_for_own_account() {
    assert_eq!(
        build_with_fields(
            "user.get",
            json!({ "username": "  Xi nil/x " }),
            json!("id")
        ),
        get("/users/Xi%20nil%2Fx?fields=id", false)
    );
    assert_eq!(
        build_with_fields("user.get", json!({ "username": " @Me " }), json!("id")),
        get("/users/@me?fields=id", true)
    );
    assert!(build("user.get", json!({ "username": "someone" }))
        .path_and_query
        .starts_with("/users/someone?fields=id,name,"));
}

#[test]
fn user_lists_build_status_sort_and_paging() {
    assert_eq!(
        build(
            "user.animeList",
            json!({ "username": "a_b", "status": "on_hold", "sort": "anime_start_date", "limit": 1000, "offset": 2000, "nsfw": true })
        ),
        get("/users/a_b/animelist?status=on_hold&sort=anime_start_date&limit=1000&offset=2000&nsfw=true", false)
    );
    assert_eq!(
        build(
            "user.mangaList",
            json!({ "username": "@ME", "status": "reading", "sort": "manga_id" })
        ),
        get("/users/@me/mangalist?status=reading&sort=manga_id", true)
    );
    assert_eq!(
        build_with_fields(
            "user.animeList",
            json!({ "username": "x" }),
            json!(["list_status"])
        ),
        get("/users/x/animelist?fields=list_status", false)
    );
}

// ---- forum ----

#[test]
fn forum_boards_takes_options_first_and_no_token() {
    assert_eq!(
        build("forum.boards", Value::Null),
        get("/forum/boards", false)
    );
}

#[test]
fn forum_topics_maps_every_filter_to_snake_case_and_allows_no_params() {
    assert_eq!(
        build("forum.topics", Value::Null),
        get("/forum/topics", false)
    );
    assert_eq!(
        build(
            "forum.topics",
            json!({
                "boardId": 1, "subboardId": 2, "q": "best anime", "topicUserName": "t u",
                "userName": "u", "sort": "recent", "limit": 100, "offset": 0
            })
        ),
        get(
            "/forum/topics?board_id=1&subboard_id=2&q=best%20anime&topic_user_name=t%20u\
             &user_name=u&sort=recent&limit=100&offset=0",
            false
        )
    );
}

#[test]
fn forum_topic_pages_its_posts() {
    assert_eq!(
        build(
            "forum.topic",
            json!({ "id": 481, "limit": 10, "offset": 20 })
        ),
        get("/forum/topic/481?limit=10&offset=20", false)
    );
}

// ---- validation rules ----

#[test]
fn blank_search_text_is_rejected() {
    assert_eq!(
        problems("anime.search", json!({ "q": "  " })),
        ["Invalid q: \"  \". Expected a non-blank string"]
    );
    assert_eq!(
        problems("manga.search", json!({ "q": 3 })),
        ["Invalid q: 3. Expected a non-blank string"]
    );
}

#[test]
fn limits_follow_each_endpoint_maximum() {
    assert_eq!(
        problems("anime.search", json!({ "q": "a", "limit": 500 })),
        ["Invalid limit: 500. Expected an integer from 1 to 100"]
    );
    assert_eq!(
        problems(
            "anime.ranking",
            json!({ "rankingType": "all", "limit": 501 })
        ),
        ["Invalid limit: 501. Expected an integer from 1 to 500"]
    );
    assert_eq!(
        problems(
            "anime.seasonal",
            json!({ "year": 2020, "season": "spring", "limit": 0 })
        ),
        ["Invalid limit: 0. Expected an integer from 1 to 500"]
    );
    assert_eq!(
        problems("user.animeList", json!({ "username": "x", "limit": 1001 })),
        ["Invalid limit: 1001. Expected an integer from 1 to 1000"]
    );
    assert_eq!(
        problems("forum.topic", json!({ "id": 1, "limit": 2.5 })),
        ["Invalid limit: 2.5. Expected an integer from 1 to 100"]
    );
    assert_eq!(
        problems("forum.topics", json!({ "limit": "10" })),
        ["Invalid limit: \"10\". Expected an integer from 1 to 100"]
    );
}

#[test]
fn offsets_and_counters_must_be_non_negative_integers() {
    assert_eq!(
        problems("anime.search", json!({ "q": "a", "offset": -1 })),
        ["Invalid offset: -1. Expected a non-negative integer"]
    );
    assert_eq!(
        problems(
            "anime.updateMyListStatus",
            json!({ "id": 1, "numWatchedEpisodes": -3 })
        ),
        ["Invalid numWatchedEpisodes: -3. Expected a non-negative integer"]
    );
    assert_eq!(
        problems(
            "manga.updateMyListStatus",
            json!({ "id": 1, "num_chapters_read": 1.5 })
        ),
        ["Invalid num_chapters_read: 1.5. Expected a non-negative integer"]
    );
}

#[test]
fn ids_and_years_must_be_positive_integers() {
    assert_eq!(
        problems("anime.get", json!({ "id": 0 })),
        ["Invalid id: 0. Expected a positive integer"]
    );
    assert_eq!(
        problems("manga.deleteFromList", json!({ "id": "12" })),
        ["Invalid id: \"12\". Expected a positive integer"]
    );
    assert_eq!(
        problems("anime.seasonal", json!({ "year": -2020, "season": "fall" })),
        ["Invalid year: -2020. Expected a positive integer"]
    );
    assert_eq!(
        problems("forum.topics", json!({ "boardId": 0 })),
        ["Invalid boardId: 0. Expected a positive integer"]
    );
}

#[test]
fn enums_list_their_allowed_values() {
    assert_eq!(
        problems("user.animeList", json!({ "username": "x", "status": "x" })),
        ["Invalid status: \"x\". Expected one of: watching, completed, on_hold, dropped, plan_to_watch"]
    );
    assert_eq!(
        problems("manga.updateMyListStatus", json!({ "id": 1, "status": "watching" })),
        ["Invalid status: \"watching\". Expected one of: reading, completed, on_hold, dropped, plan_to_read"]
    );
    assert_eq!(
        problems(
            "anime.seasonal",
            json!({ "year": 2020, "season": "autumn" })
        ),
        ["Invalid season: \"autumn\". Expected one of: winter, spring, summer, fall"]
    );
    assert_eq!(
        problems(
            "anime.seasonal",
            json!({ "year": 2020, "season": "fall", "sort": "title" })
        ),
        ["Invalid sort: \"title\". Expected one of: anime_score, anime_num_list_users"]
    );
    assert_eq!(
        problems("anime.ranking", json!({ "rankingType": "novels" })),
        ["Invalid rankingType: \"novels\". Expected one of: all, airing, upcoming, tv, ova, movie, special, bypopularity, favorite"]
    );
    assert_eq!(
        problems("manga.ranking", json!({ "rankingType": "tv" })),
        ["Invalid rankingType: \"tv\". Expected one of: all, manga, novels, oneshots, doujin, manhwa, manhua, bypopularity, favorite"]
    );
    assert_eq!(
        problems("user.mangaList", json!({ "username": "x", "sort": "anime_title" })),
        ["Invalid sort: \"anime_title\". Expected one of: list_score, list_updated_at, manga_title, manga_start_date, manga_id"]
    );
    assert_eq!(
        problems("user.animeList", json!({ "username": "x", "sort": "manga_title" })),
        ["Invalid sort: \"manga_title\". Expected one of: list_score, list_updated_at, anime_title, anime_start_date, anime_id"]
    );
    assert_eq!(
        problems("forum.topics", json!({ "sort": "oldest" })),
        ["Invalid sort: \"oldest\". Expected one of: recent"]
    );
}

#[test]
fn list_scores_priorities_and_rewatch_values_are_bounded() {
    assert_eq!(
        problems(
            "anime.updateMyListStatus",
            json!({ "id": 1, "score": 11, "priority": 3, "rewatchValue": 6 })
        ),
        [
            "Invalid score: 11. Expected an integer from 0 to 10",
            "Invalid priority: 3. Expected an integer from 0 to 2",
            "Invalid rewatchValue: 6. Expected an integer from 0 to 5",
        ]
    );
    assert_eq!(
        problems(
            "manga.updateMyListStatus",
            json!({ "id": 1, "reread_value": -1 })
        ),
        ["Invalid reread_value: -1. Expected an integer from 0 to 5"]
    );
}

#[test]
fn booleans_texts_and_tags_are_type_checked() {
    assert_eq!(
        problems("anime.search", json!({ "q": "a", "nsfw": "yes" })),
        ["Invalid nsfw: \"yes\". Expected a boolean"]
    );
    assert_eq!(
        problems(
            "anime.updateMyListStatus",
            json!({ "id": 1, "isRewatching": 1, "comments": 5, "tags": ["a,b"] })
        ),
        [
            "Invalid isRewatching: 1. Expected a boolean",
            "Invalid tags[0]: \"a,b\". Expected a string without commas",
            "Invalid comments: 5. Expected a string",
        ]
    );
    assert_eq!(
        problems(
            "forum.topics",
            json!({ "topicUserName": " ", "userName": "" })
        ),
        [
            "Invalid topicUserName: \" \". Expected a non-blank string",
            "Invalid userName: \"\". Expected a non-blank string",
        ]
    );
}

#[test]
fn blank_usernames_are_rejected() {
    assert_eq!(
        problems("user.get", json!({ "username": "   " })),
        ["Invalid username: \"   \". Expected a non-blank user name"]
    );
    assert_eq!(
        problems("user.mangaList", json!({ "username": 42 })),
        ["Invalid username: 42. Expected a non-blank user name"]
    );
}

#[test]
fn missing_required_variables_are_named() {
    assert_eq!(
        problems("anime.get", json!({})),
        ["Missing required variable: id"]
    );
    assert_eq!(
        problems("anime.get", Value::Null),
        ["Missing required variable: id"]
    );
    assert_eq!(
        problems("anime.search", json!({ "q": null })),
        ["Missing required variable: q"]
    );
    assert_eq!(
        problems("user.animeList", json!({})),
        ["Missing required variable: username"]
    );
    assert_eq!(
        problems("anime.seasonal", json!({})),
        [
            "Missing required variable: year",
            "Missing required variable: season"
        ]
    );
    assert_eq!(
        problems("manga.ranking", json!({})),
        ["Missing required variable: rankingType"]
    );
}

#[test]
fn unknown_variables_are_rejected_including_wire_names_outside_list_bodies() {
    assert_eq!(
        problems("anime.get", json!({ "id": 1, "foo": true })),
        ["Unknown variable: foo"]
    );
    assert_eq!(
        problems("anime.ranking", json!({ "ranking_type": "all" })),
        [
            "Missing required variable: rankingType",
            "Unknown variable: ranking_type"
        ]
    );
    assert_eq!(
        problems("forum.boards", json!({ "limit": 1 })),
        ["Unknown variable: limit"]
    );
    assert_eq!(
        problems("anime.get", json!({ "id": 1, "nsfw": true })),
        ["Unknown variable: nsfw"]
    );
}

#[test]
fn params_must_be_an_object() {
    assert_eq!(
        problems("anime.get", json!(5)),
        ["Invalid params: 5. Expected an object."]
    );
    assert_eq!(
        problems("forum.topics", json!(["x"])),
        ["Invalid params: [\"x\"]. Expected an object."]
    );
}

#[test]
fn list_updates_need_at_least_one_list_field() {
    assert_eq!(
        problems("anime.updateMyListStatus", json!({ "id": 1 })),
        ["updateMyListStatus requires at least one list field"]
    );
    assert_eq!(
        problems(
            "manga.updateMyListStatus",
            json!({ "id": 1, "score": null })
        ),
        ["updateMyListStatus requires at least one list field"]
    );
}

#[test]
fn both_spellings_of_one_list_field_conflict() {
    assert_eq!(
        problems(
            "anime.updateMyListStatus",
            json!({ "id": 1, "numWatchedEpisodes": 1, "num_watched_episodes": 2 })
        ),
        ["Conflicting variables: numWatchedEpisodes and num_watched_episodes. Give only one of them"]
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    assert_eq!(
        problems(
            "user.animeList",
            json!({ "username": " ", "status": "x", "limit": 0, "offset": -1, "extra": 1 })
        ),
        [
            "Invalid username: \" \". Expected a non-blank user name",
            "Invalid status: \"x\". Expected one of: watching, completed, on_hold, dropped, plan_to_watch",
            "Invalid limit: 0. Expected an integer from 1 to 1000",
            "Invalid offset: -1. Expected a non-negative integer",
            "Unknown variable: extra",
        ]
    );
    match build_request(op("anime.get"), &json!({}), Some(&json!(["", 3]))) {
        Err(found) => assert_eq!(
            found,
            [
                "Missing required variable: id",
                "Invalid fields[0]: \"\". Expected a non-blank field name",
                "Invalid fields[1]: 3. Expected a non-blank field name",
            ]
        ),
        Ok(request) => panic!("accepted {request:?}"),
    }
}

#[test]
fn fields_must_be_a_non_blank_string_or_a_non_empty_array() {
    assert_eq!(
        fields_problems("anime.get", json!({ "id": 1 }), json!("  ")),
        ["Invalid fields: \"  \". Expected a non-blank string or an array of field names"]
    );
    assert_eq!(
        fields_problems("anime.get", json!({ "id": 1 }), json!([])),
        ["Invalid fields: []. Expected at least one field name"]
    );
    assert_eq!(
        fields_problems("user.me", Value::Null, json!(true)),
        ["Invalid fields: true. Expected a non-blank string or an array of field names"]
    );
}

#[test]
fn null_fields_mean_absent() {
    assert_eq!(
        build_with_fields("anime.search", json!({ "q": "a" }), Value::Null),
        get("/anime?q=a", false)
    );
}

#[test]
fn list_writes_send_fields_and_deletes_ignore_them() {
    let update = build_with_fields(
        "anime.updateMyListStatus",
        json!({ "id": 1, "score": 1 }),
        json!(["status", "score"]),
    );
    assert_eq!(
        update.path_and_query,
        "/anime/1/my_list_status?fields=status,score"
    );
    assert_eq!(update.form_body.as_deref(), Some("score=1"));
    let update = build("manga.updateMyListStatus", json!({ "id": 1, "score": 1 }));
    assert_eq!(
        update.path_and_query, "/manga/1/my_list_status",
        "no default list on writes"
    );
    let delete = build_with_fields("manga.deleteFromList", json!({ "id": 1 }), json!(["id"]));
    assert_eq!(delete.path_and_query, "/manga/1/my_list_status");
}

#[test]
fn the_positional_form_of_2_2_0_covers_get_update_and_delete() {
    let legacy: Vec<(&str, LegacyArguments)> = operations()
        .filter(|op| op.legacy_arguments() != LegacyArguments::None)
        .map(|op| (op.key(), op.legacy_arguments()))
        .collect();
    assert_eq!(
        legacy,
        [
            ("anime.get", LegacyArguments::Id),
            ("anime.updateMyListStatus", LegacyArguments::IdAndPayload),
            ("anime.deleteFromList", LegacyArguments::Id),
            ("manga.get", LegacyArguments::Id),
            ("manga.updateMyListStatus", LegacyArguments::IdAndPayload),
            ("manga.deleteFromList", LegacyArguments::Id),
        ]
    );
}

#[test]
fn list_updates_take_start_and_finish_dates() {
    let update = build(
        "anime.updateMyListStatus",
        json!({ "id": 1, "start_date": "2024-01", "finishDate": "2024-02-03" }),
    );
    assert_eq!(
        update.form_body.as_deref(),
        Some("start_date=2024-01&finish_date=2024-02-03")
    );
    assert_eq!(
        problems(
            "manga.updateMyListStatus",
            json!({ "id": 1, "startDate": " " })
        ),
        ["Invalid startDate: \" \". Expected a non-blank string"]
    );
}

#[test]
fn forum_topics_accepts_subboard_zero() {
    let topics = build("forum.topics", json!({ "subboardId": 0 }));
    assert_eq!(topics.path_and_query, "/forum/topics?subboard_id=0");
    assert_eq!(
        problems("forum.topics", json!({ "boardId": 0 })),
        ["Invalid boardId: 0. Expected a positive integer"]
    );
}

#[test]
fn fields_in_the_params_object_are_sent_as_the_options_fields_are() {
    for (key, params, with_fields) in [
        (
            "anime.get",
            json!({ "id": 21 }),
            json!({ "id": 21, "fields": ["id", "title"] }),
        ),
        (
            "manga.get",
            json!({ "id": 2 }),
            json!({ "id": 2, "fields": "id,title" }),
        ),
        (
            "anime.search",
            json!({ "q": "one", "limit": 2 }),
            json!({ "q": "one", "limit": 2, "fields": ["id", "title"] }),
        ),
        (
            "user.animeList",
            json!({ "username": "u" }),
            json!({ "username": "u", "fields": ["list_status"] }),
        ),
        (
            "anime.updateMyListStatus",
            json!({ "id": 1, "score": 1 }),
            json!({ "id": 1, "score": 1, "fields": ["score"] }),
        ),
    ] {
        let options_fields = with_fields["fields"].clone();
        assert_eq!(
            build(key, with_fields),
            build_with_fields(key, params, options_fields),
            "{key}"
        );
    }
    assert_eq!(
        build("anime.get", json!({ "id": 21, "fields": null })),
        build("anime.get", json!({ "id": 21 })),
        "null fields mean absent: the default list"
    );
    assert_eq!(
        problems("anime.get", json!({ "id": 21, "fields": [] })),
        ["Invalid fields: []. Expected at least one field name"]
    );
    assert_eq!(
        fields_problems("anime.get", json!({ "id": 21, "fields": ["id"] }), json!(["title"])),
        ["Conflicting fields: given both in the params object and in the options. Give them in one place"]
    );
}
